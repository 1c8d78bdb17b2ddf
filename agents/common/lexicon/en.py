"""English: the resolver's own grammar is English; these phrases are the chat forms of it.

Its relation and pet words are the ones facts are written in, so each means itself.
"""

from __future__ import annotations

from .base import Lexicon, Phrase, counted, forms, words

_RELATIONS = (
    "friend brother sister sibling husband wife spouse partner boyfriend girlfriend fiance "
    "fiancee fiancé fiancée mom mum mother dad father parent son daughter child kid cousin "
    "aunt uncle niece nephew grandma grandmother grandpa grandfather colleague coworker "
    "co-worker boss neighbour neighbor roommate flatmate mentor classmate family"
).split()
_PETS = (
    "pet dog puppy pup cat kitten kitty rabbit bunny hamster parrot bird budgie fish "
    "goldfish turtle tortoise lizard snake horse pony ferret greyhound labrador retriever "
    "poodle terrier spaniel collie beagle"
).split()

_SLOT_CUES = {
    "residence": (
        "live lives lived living move moved moving relocate relocated apartment flat "
        "house home rent renting lease landlord neighbourhood "
        "neighborhood suburb hometown resident reside address"
    ).split(),
    "work": (
        "job jobs work works worked working employer employed hire hired quit resign "
        "resigned promoted promotion career office company firm "
        "teach teaches teaching analyst paralegal waitressing notice shift shifts staff "
        "intern internship retire retired fired layoff startup nurse teacher engineer "
        "developer designer chef barista lawyer doctor accountant manager consultant "
        "cashier waiter waitress programmer architect journalist electrician mechanic "
        "pilot freelance freelancer salary"
    ).split(),
    "study": (
        "school college university uni major majoring degree study studies studying "
        "student course graduate graduated enrol enroll enrolled phd master masters "
        "bachelor semester thesis professor campus sophomore freshman undergrad "
        "undergraduate postgrad transfer transferred transferring"
    ).split(),
    "partner": (
        "married marry marriage engaged engagement dating relationship breakup divorce "
        "divorced single ex"
    ).split(),
    "pet": "adopt adopted vet".split(),
    "plans": (
        "plan plans planned planning trip travel travelling traveling vacation holiday "
        "holidays postpone postponed cancel cancelled canceled reschedule rescheduled "
        "intend booked honeymoon wedding flight flying marathon"
    ).split(),
    "name": "name named rename renamed nickname nicknamed".split(),
    "contact": (
        "phone number email mail address mobile cell landline handle username whatsapp "
        "street avenue road lane"
    ).split(),
    "possession": (
        "car bike bicycle motorbike motorcycle scooter van truck boat sell sold selling "
        "buy bought own owns vehicle drive drives"
    ).split(),
    "diet": (
        "vegan vegetarian veggie pescatarian keto diet meat gluten dairy lactose sugar "
        "alcohol sober teetotal wine beer drinking fish seafood chicken beef pork eggs"
    ).split(),
    "favourite": "favourite favorite fave prefer prefers preferred".split(),
}
_SLOT_PHRASES = {
    "residence": ("based in", "settled in"),
    "work": ("laid off", "works as", "works at", "working at", "last day"),
    "partner": (
        "broke up",
        "split up",
        "seeing someone",
        "going out with",
        "been together",
        "together since",
    ),
    "plans": ("going to", "will ", "'ll ", "won't ", "will not", "instead of"),
    "name": ("calls me", "call me", "called me", "goes by"),
}

ENGLISH = Lexicon(
    code="en",
    weekdays=forms(
        "monday/mon, tuesday/tue/tues, wednesday/wed/weds, thursday/thu/thur/thurs, friday/fri, "
        "saturday/sat, sunday/sun"
    ),
    months=forms(
        "january/jan, february/feb, march/mar, april/apr, may, june/jun, july/jul, august/aug, "
        "september/sep/sept, october/oct, november/nov, december/dec"
    ),
    numbers={
        **counted("a/an/one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve"),
        **{
            w: 10 * n
            for n, w in enumerate(
                "twenty thirty forty fifty sixty seventy eighty ninety".split(), 2
            )
        },
        "hundred": 100,
        "thousand": 1000,
    },
    units=words(
        {
            "day": "day, days, d, dys",
            "week": "week, weeks, wk, wks",
            "weekend": "weekend, wknd",
            "month": "month, months, mo, mos, mth, mths",
            "year": "year, years, yr, yrs",
        }
    ),
    phrases=(
        Phrase(r"(?:yday|yesterdy|yesteday|yest)", "yesterday"),
        Phrase(r"(?:tmrw|tmr|tmrow|tomoro|tomorow|tommorow|tommorrow|2moro|2morrow)", "tomorrow"),
        Phrase(r"(?:tonite|2nite|tnite)", "tonight"),
        Phrase(r"{num} {unit} ago", "{num} {unit}s ago"),
        Phrase(r"(?P<num>\d{1,3})(?P<unit>d|dys|wks?|mos|mths?|yrs?) ago", "{num} {unit}s ago"),
        Phrase(r"(?:next|nxt) {wd}\.?", "next {wd}"),
        Phrase(r"(?:last|lst) {wd}\.?", "last {wd}"),
        Phrase(r"this {wd}\.?", "this {wd}"),
        Phrase(r"(?:next|nxt) {unit}", "next {unit}"),
        Phrase(r"(?:last|lst) {unit}", "last {unit}"),
    ),
    relations={**{w: w for w in _RELATIONS}, "children": "child"},
    pets={**{w: w for w in _PETS}, "guinea pig": "guinea pig"},
    possessives=("my", "our"),
    slot_cues={slot: tuple(words) for slot, words in _SLOT_CUES.items()},
    slot_phrases=_SLOT_PHRASES,
    naming=("is called", "is named", "called", "named"),
)

DROPPED_I_OPENERS = frozenset(
    "just been got went had did made took started finished tried bought visited joined "
    "spent saw met found loved love hope hoping thinking feeling felt having doing "
    "working trying getting going planning gonna recently finally also still really "
    "currently gotta wanna didn't can't cant haven't couldn't wasn't".split()
)
"""Words a chat clause starts with when it drops its "I" ("Been busy volunteering",
"Just started doing aerial yoga", "Went hiking yesterday")."""
INTERJECTIONS = frozenset(
    "great thanks thank wow sorry awesome congrats congratulations nice cool hey hi hello "
    "yes yeah yep no nope oh ah well sure glad amazing good haha lol ok okay totally "
    "absolutely definitely exactly agreed cheers nah".split()
)
"""Words a chat turn opens with that are nobody's name."""
SUBJECT_I = frozenset("i i'm i've i'll i'd we we're we've we'll we'd let's".split())
"""The first-person subjects: a clause they open is the speaker's."""
SUBJECT_YOU = frozenset("you you're you've you'll you'd".split())
"""The second-person subjects: a clause they open is the one addressed."""
NOT_NAMES = frozenset(
    "I And But So Or The A An In On At This That These Those Is Was Who Which When Where "
    "What How Then After Before Every Some We He She They It You Her His Their Our My Your "
    "Today Yesterday Tomorrow Last Next".split()
)
"""Capitalised words that open an English sentence without naming anyone."""
