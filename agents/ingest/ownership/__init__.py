"""Whose a note, a title or a summary is, read from the grammar of its source turns (no LLM).

The owner rules (:mod:`.grammar`, :mod:`.owner_check`, :mod:`.present`), whom a turn
names (:mod:`.named`, :mod:`.relations`), and the repairs of a note told in the wrong
voice or the wrong mouth (:mod:`.voice`, :mod:`.swapped_names`, :mod:`.titles`,
:mod:`.reported`).
"""
