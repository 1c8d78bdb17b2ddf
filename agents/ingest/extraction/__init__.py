"""What construction writes: the construction call, how its reply is read, and what it becomes.

The call (:mod:`.drafting`, with the never-store rule of :mod:`.withholding`), the reply
format (:mod:`.lines`) and the facts and episode text a draft becomes (:mod:`.construct`),
with the rules that correct a note's wording: its kind, a note split per person, the
prompt example copied, and the turns too trivial to construct from (:mod:`.salience`).
"""
