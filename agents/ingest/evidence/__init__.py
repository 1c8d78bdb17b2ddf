"""Whether a note's source turns bear it out: its content words found there, not only asked.

The word-level support every rule package counts with (:mod:`.support`), and the
question rule (:mod:`.questions`): a note only a question supports asserts nothing.
"""
