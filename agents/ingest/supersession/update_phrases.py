"""The phrases of the update cues (:mod:`.update_cues`), per slot: data, not logic.

Each phrase is a regular expression matched in the casefolded newer statement at word
boundaries. A *leaving* phrase says the old state ended ("quit", "moved out", "broke
up"); an *arriving* phrase says a new state replaced it ("moved to", "new job",
"renamed"). Phrases that hold in any slot ("no longer") are listed once.
"""

from __future__ import annotations

from ...common.lexicon import PARTNERS_EN

DET = r"(?:a|an|the|my|his|her|their|our|its|your|\w+'s)"

LEAVING: dict[str, tuple[str, ...]] = {
    "residence": (
        r"moved out",
        r"moving out",
        r"no longer lives?",
        rf"left {DET} (?:flat|apartment|house|place|city|town)",
        r"moved(?= *[!.]| *$)",
        r"moved (?:house|home|away)",
    ),
    "name": (r"stop(?:ped)? calling",),
    "work": (
        r"quit",
        r"quitting",
        r"resign(?:ed|ing|s)?",
        r"retir(?:ed|ing|es)",
        r"(?:was|got|been|being) (?:fired|sacked|let go)",
        r"laid off",
        rf"left {DET} (?:job|company|firm|position|role|office)",
        rf"handed in {DET} notice",
        r"last day",
    ),
    "contact": (
        r"(?:number|email|e-mail|address) (?:is|was) (?:no longer|dead|gone)",
        r"disconnected",
        r"(?:old|previous|former) (?:phone |mobile |email |e-mail |home |postal )?"
        r"(?:number|email|e-mail|address)",
    ),
    "study": (
        r"dropped out",
        r"graduated",
        rf"finished {DET} (?:degree|studies|course|masters?|phd)",
        rf"dropped {DET} (?:\w+ )?(?:course|class|classes|module|major)",
        r"quit",
    ),
    "partner": (
        r"broke up",
        r"break ?up",
        r"split up",
        r"divorc(?:ed|ing|e)",
        r"separated",
        r"ended (?:it|things|the relationship)",
        r"single again",
    ),
    "pet": (
        r"passed away",
        r"died",
        r"put down",
        r"put to sleep",
        r"re-?hom(?:e|ed|ing)",
        r"gave (?:him|her|it|them) away",
        r"ran away",
    ),
    "plans": (
        r"cancel(?:l)?ed",
        r"cancel(?:l)?ing",
        r"called off",
        r"not going",
        r"won't go",
        r"(?:will not|won't) \w+",
        r"gave up on",
        r"dropped (?:the|his|her|their|our) plans?",
        r"(?:is|are) off",
        r"fell through",
        r"decided (?:not to|against)",
    ),
    "possession": (
        r"sold",
        r"selling",
        r"traded in",
        r"gave away",
        r"got rid of",
        r"totall?ed",
        r"(?:was|got) stolen",
    ),
    "diet": (
        r"(?:stopped|quit|gave up|giving up) (?:eating|drinking|meat|alcohol|sugar|dairy|gluten)",
        r"no longer (?:eats?|drinks?)",
    ),
}
"""Per slot: phrases saying the old state ended."""

ARRIVING: dict[str, tuple[str, ...]] = {
    "residence": (
        r"(?:moved|moving|relocated|relocating) (?:to|into|in with|back to|back home)",
        r"new (?:place|flat|apartment|house|home)",
        rf"bought {DET} (?:place|flat|apartment|house|home|condo)",
        r"now (?:lives?|living|based|renting)",
        r"moved in",
    ),
    "work": (
        r"(?:new|first) job",
        r"started (?:a |her |his |their |my )?(?:new )?(?:job|work|working|position|role)",
        r"(?:was|got|been|is|being) (?:hired|promoted)",
        r"now works?",
        r"switched (?:jobs|careers)",
        r"(?:career|job) change",
        r"took (?:a|an) (?:[\w-]+ )?job",
        r"started (?:at|with)",
    ),
    "study": (
        r"(?:transferred|transferring|switched|changed) "
        r"(?:to|from|majors?|schools?|courses?|degrees?)",
        rf"(?:switched|changed) {DET} (?:major|school|course|degree)",
        r"now (?:studies|studying|majoring)",
    ),
    "partner": (
        rf"new (?:{'|'.join(sorted(PARTNERS_EN))})",
        r"got engaged",
        r"got married",
        r"started dating",
        r"(?:been|are|got) together",
        r"seeing someone new",
    ),
    "pet": (
        r"renamed",
        r"now (?:called|named)",
        rf"changed {DET} (?:[\w-]+'s )?name",
    ),
    "plans": (
        r"postponed",
        r"rescheduled",
        r"pushed (?:it |the \w+ )?back",
        r"brought (?:it |the \w+ )?forward",
        r"moved (?:it|the \w+) to",
        rf"changed {DET} plans?",
        r"change of plans?",
        r"plans? changed",
        r"instead",
    ),
    "name": (r"renamed", rf"changed {DET} (?:[\w-]+'s )?name", r"now (?:goes by|called|named)"),
    "contact": (
        r"new (?:phone|number|email|e-mail|address|mobile)",
        rf"(?:changed?|changing|updated?|updates|updating) {DET} "
        r"(?:phone |mobile |email |e-mail |home |postal )?(?:number|email|e-mail|address)",
    ),
    "possession": (r"(?:new|replaced (?:the|his|her|their|my)) (?:car|bike|phone|laptop)",),
    "diet": (
        r"(?:went|gone|going|became|become|turned) (?:vegan|vegetarian|pescatarian|keto)",
        r"(?:started|back to) eating",
    ),
    "favourite": (
        r"new favou?rite",
        r"favou?rite is now",
        r"favou?rite \w+ now",
        r"now (?:prefers|likes|loves)",
        r"replaced",
        r"(?:gone|went) off",
    ),
}
"""Per slot: phrases saying a new state replaced the old one."""

ANY_SLOT_LEAVING: tuple[str, ...] = (r"no longer", r"no more", r"any ?more")
"""Phrases that end a state in any slot ("doesn't live there anymore")."""


__all__ = ["ANY_SLOT_LEAVING", "ARRIVING", "DET", "LEAVING"]
