"""French: the words of dates, relations and pets as French chats write them."""

from __future__ import annotations

from .base import Lexicon, Phrase, counted, forms, words

FRENCH = Lexicon(
    code="fr",
    weekdays=forms("lundi, mardi, mercredi, jeudi, vendredi, samedi, dimanche"),
    months=forms(
        "janvier, février/fevrier, mars, avril, mai, juin, juillet, août/aout, septembre, octobre, "
        "novembre, décembre/decembre"
    ),
    numbers={
        **counted("un/une, deux, trois, quatre, cinq, six, sept, huit, neuf, dix, onze, douze"),
        "quinze": 15,
    },
    units=words(
        {
            "day": "jour, jours",
            "week": "semaine, semaines",
            "month": "mois",
            "year": "an, ans, année, années, annee",
            "weekend": "week-end, weekend, week end",
        }
    ),
    phrases=(
        Phrase(r"avant-hier|avant hier", "the day before yesterday"),
        Phrase(r"après-demain|après demain|apres-demain|apres demain", "the day after tomorrow"),
        Phrase(r"hier(?: soir)?", "yesterday"),
        Phrase(r"aujourd'hui|aujourd’hui|auj", "today"),
        Phrase(r"demain", "tomorrow"),
        Phrase(r"il y a {num} {unit}", "{num} {unit}s ago"),
        Phrase(r"dans {num} {unit}", "in {num} {unit}s"),
        Phrase(r"(?:un |une )?{unit} plus tôt", "1 {unit} ago"),
        Phrase(r"(?:le |ce )?{wd} dernier", "last {wd}"),
        Phrase(r"(?:le |ce )?{wd} prochain", "next {wd}"),
        Phrase(r"ce {wd}(?! dernier| prochain)", "this {wd}"),
        Phrase(
            r"(?:la |le |l'|l’)?{unit} (?:dernière|derniere|dernier|passée|passé)", "last {unit}"
        ),
        Phrase(r"(?:la |le |l'|l’)?{unit} (?:prochaine|prochain)", "next {unit}"),
        Phrase(r"(?:ce |cette )?{unit}-ci|(?:ce|cette) {unit}", "this {unit}"),
        Phrase(r"(?:en )?{month} dernier", "last {month}"),
    ),
    relations=words(
        {
            "friend": "ami, amie",
            "boyfriend": "copain, petit ami",
            "girlfriend": "copine, petite amie",
            "brother": "frère, frere",
            "sister": "sœur, soeur",
            "husband": "mari, époux",
            "wife": "femme, épouse",
            "partner": "conjoint, conjointe, compagnon, compagne",
            "fiance": "fiancé",
            "fiancee": "fiancée",
            "mom": "maman",
            "mother": "mère, mere",
            "dad": "papa",
            "father": "père, pere",
            "son": "fils",
            "daughter": "fille",
            "cousin": "cousin, cousine",
            "aunt": "tante",
            "uncle": "oncle",
            "nephew": "neveu",
            "niece": "nièce, niece",
            "grandma": "mamie",
            "grandmother": "grand-mère",
            "grandpa": "papi, papy",
            "grandfather": "grand-père",
            "colleague": "collègue, collegue",
            "boss": "patron, patronne, cheffe",
            "neighbour": "voisin, voisine",
            "roommate": "colocataire, coloc",
        }
    ),
    pets=words(
        {
            "dog": "chien, chienne",
            "puppy": "chiot",
            "cat": "chat",
            "kitten": "chaton",
            "rabbit": "lapin",
            "hamster": "hamster",
            "guinea pig": "cochon d'inde",
            "parrot": "perroquet",
            "budgie": "perruche",
            "bird": "oiseau",
            "fish": "poisson",
            "turtle": "tortue",
            "horse": "cheval",
            "pony": "poney",
            "ferret": "furet",
        }
    ),
    possessives=("mon", "ma", "mes", "notre", "nos"),
    naming=("s'appelle", "s’appelle"),
    homographs=frozenset({"chat", "patron"}),
)
