"""German: the words of dates, relations and pets as German chats write them."""

from __future__ import annotations

from .base import Lexicon, Phrase, counted, forms, words

GERMAN = Lexicon(
    code="de",
    weekdays=forms("montag, dienstag, mittwoch, donnerstag, freitag, samstag/sonnabend, sonntag"),
    months=forms(
        "januar/jänner, februar, märz/maerz, april, mai, juni, juli, august, september, oktober, "
        "november, dezember"
    ),
    numbers={
        **counted(
            "einem/einer/ein/eine, zwei, drei, vier, fünf, sechs, sieben, acht, neun, zehn, elf, "
            "zwölf"
        ),
        "ein paar": 3,
    },
    units=words(
        {
            "day": "tag, tage, tagen",
            "week": "woche, wochen",
            "month": "monat, monate, monaten",
            "year": "jahr, jahre, jahren",
            "weekend": "wochenende",
        }
    ),
    phrases=(
        Phrase(r"vorgestern", "the day before yesterday"),
        Phrase(r"übermorgen|uebermorgen", "the day after tomorrow"),
        Phrase(r"gestern(?: abend| nacht)?", "yesterday"),
        Phrase(r"heute", "today"),
        Phrase(r"(?<!guten )(?<!am )(?<!heute )(?<!gestern )(?<!jeden )morgen", "tomorrow"),
        Phrase(r"vor {num} {unit}", "{num} {unit}s ago"),
        Phrase(r"in {num} {unit}", "in {num} {unit}s"),
        Phrase(r"(?:am |den )?(?:letzten|letzter|letztem|vergangenen|vorigen) {wd}", "last {wd}"),
        Phrase(r"(?:am |den )?(?:nächsten|naechsten|kommenden) {wd}", "next {wd}"),
        Phrase(r"(?:diesen|am kommenden) {wd}", "this {wd}"),
        Phrase(
            r"(?:am |im |in der )?(?:letzte|letzten|letztes|vergangene|vergangenen|vergangenes"
            r"|vorige|vorigen|voriges) {unit}",
            "last {unit}",
        ),
        Phrase(
            r"(?:am |im |in der )?(?:nächste|nächsten|nächstes|naechste|naechsten|kommende"
            r"|kommenden|kommendes) {unit}",
            "next {unit}",
        ),
        Phrase(r"(?:diese|diesen|dieses) {unit}", "this {unit}"),
        Phrase(r"(?:im |letzten )?{month} letzten jahres", "last {month}"),
    ),
    relations=words(
        {
            "friend": "freund, freundin",
            "brother": "bruder",
            "sister": "schwester",
            "husband": "mann, ehemann",
            "wife": "frau, ehefrau",
            "partner": "partner, partnerin",
            "fiance": "verlobter",
            "fiancee": "verlobte",
            "mom": "mama",
            "mother": "mutter",
            "dad": "papa",
            "father": "vater",
            "son": "sohn",
            "daughter": "tochter",
            "cousin": "cousin, cousine, kusine",
            "aunt": "tante",
            "uncle": "onkel",
            "nephew": "neffe",
            "niece": "nichte",
            "grandma": "oma",
            "grandmother": "großmutter",
            "grandpa": "opa",
            "grandfather": "großvater",
            "colleague": "kollege, kollegin",
            "boss": "chef, chefin",
            "neighbour": "nachbar, nachbarin",
            "roommate": "mitbewohner, mitbewohnerin",
        }
    ),
    pets=words(
        {
            "pet": "haustier",
            "dog": "hund, hündin",
            "puppy": "welpe",
            "cat": "katze, kater",
            "kitten": "kätzchen",
            "rabbit": "kaninchen, hase",
            "hamster": "hamster",
            "guinea pig": "meerschweinchen",
            "parrot": "papagei",
            "budgie": "wellensittich",
            "bird": "vogel",
            "fish": "fisch",
            "turtle": "schildkröte",
            "horse": "pferd",
            "pony": "pony",
            "ferret": "frettchen",
        }
    ),
    possessives=tuple(
        "mein meine meinem meinen meiner unser unsere unserem unseren unserer".split()
    ),
    naming=("heißt", "heisst"),
)
