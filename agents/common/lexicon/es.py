"""Spanish (Spain and the Americas)."""

from __future__ import annotations

from .base import Lexicon, Phrase, counted, forms, words

SPANISH = Lexicon(
    code="es",
    weekdays=forms("lunes, martes, miércoles/miercoles, jueves, viernes, sábado/sabado, domingo"),
    months=forms(
        "enero, febrero, marzo, abril, mayo, junio, julio, agosto, septiembre/setiembre, octubre, "
        "noviembre, diciembre"
    ),
    numbers={
        **counted(
            "un/una/uno, dos, tres, cuatro, cinco, seis, siete, ocho, nueve, diez, once, doce"
        ),
        "un par de": 2,
    },
    units=words(
        {
            "day": "día, dia, días, dias",
            "week": "semana, semanas",
            "month": "mes, meses",
            "year": "año, años",
            "weekend": "fin de semana, finde",
        }
    ),
    phrases=(
        Phrase(r"(?:anteayer|antier|antes de ayer|antes de ayer)", "the day before yesterday"),
        Phrase(r"pasado mañana", "the day after tomorrow"),
        Phrase(r"ayer", "yesterday"),
        Phrase(r"anoche", "last night"),
        Phrase(r"hoy", "today"),
        Phrase(r"(?<!la )(?<!esta )(?<!por la )(?<!de la )(?<!una )mañana", "tomorrow"),
        Phrase(r"hace {num} {unit}", "{num} {unit}s ago"),
        Phrase(r"(?:dentro de|en) {num} {unit}", "in {num} {unit}s"),
        Phrase(r"(?:el |este )?{wd} pasado", "last {wd}"),
        Phrase(r"(?:el )?pasado {wd}", "last {wd}"),
        Phrase(r"(?:el )?próximo {wd}|(?:el )?proximo {wd}", "next {wd}"),
        Phrase(r"(?:el )?{wd} (?:que viene|próximo|proximo)", "next {wd}"),
        Phrase(r"este {wd}", "this {wd}"),
        Phrase(r"(?:la |el )?{unit} pasad[oa]", "last {unit}"),
        Phrase(r"(?:la |el )?pasad[oa] {unit}", "last {unit}"),
        Phrase(r"(?:la |el )?{unit} (?:que viene|próxim[oa]|proxim[oa])", "next {unit}"),
        Phrase(r"(?:la |el )?(?:próxim[oa]|proxim[oa]) {unit}", "next {unit}"),
        Phrase(r"(?:este|esta) {unit}", "this {unit}"),
        Phrase(r"(?:el )?{month} pasado", "last {month}"),
    ),
    relations=words(
        {
            "friend": "amigo, amiga",
            "brother": "hermano",
            "sister": "hermana",
            "husband": "marido, esposo",
            "wife": "esposa",
            "partner": "pareja",
            "boyfriend": "novio",
            "girlfriend": "novia",
            "fiance": "prometido",
            "fiancee": "prometida",
            "mom": "mamá, mama",
            "mother": "madre",
            "dad": "papá, papa",
            "father": "padre",
            "son": "hijo",
            "daughter": "hija",
            "cousin": "primo, prima",
            "aunt": "tía, tia",
            "uncle": "tío, tio",
            "nephew": "sobrino",
            "niece": "sobrina",
            "grandmother": "abuela",
            "grandfather": "abuelo",
            "colleague": "colega, compañero, compañera",
            "boss": "jefe, jefa",
            "neighbour": "vecino, vecina",
            "roommate": "compañero de piso, compañera de piso",
        }
    ),
    pets=words(
        {
            "pet": "mascota",
            "dog": "perro, perra, perrito, perrita",
            "puppy": "cachorro",
            "cat": "gato, gata",
            "kitten": "gatito, gatita",
            "rabbit": "conejo",
            "hamster": "hámster, hamster",
            "guinea pig": "cobaya",
            "parrot": "loro",
            "bird": "pájaro",
            "fish": "pez",
            "turtle": "tortuga",
            "horse": "caballo",
            "ferret": "hurón",
        }
    ),
    possessives=("mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras"),
    naming=("se llama",),
)
