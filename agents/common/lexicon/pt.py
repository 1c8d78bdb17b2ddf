"""Portuguese (Brazil and Portugal)."""

from __future__ import annotations

from .base import Lexicon, Phrase, counted, forms, words

PORTUGUESE = Lexicon(
    code="pt",
    weekdays=forms(
        "segunda-feira/segunda feira/segunda, terça-feira/terça feira/terça/terca-feira/terca, "
        "quarta-feira/quarta feira/quarta, quinta-feira/quinta feira/quinta, "
        "sexta-feira/sexta feira/sexta, sábado/sabado, domingo"
    ),
    months=forms(
        "janeiro, fevereiro, março/marco, abril, maio, junho, julho, agosto, setembro, outubro, "
        "novembro, dezembro"
    ),
    numbers={
        **counted(
            "um/uma, dois/duas, três/tres, quatro, cinco, seis, sete, oito, nove, dez, onze, doze"
        ),
        "quinze": 15,
    },
    units=words(
        {
            "day": "dia, dias",
            "week": "semana, semanas",
            "month": "mês, mes, meses",
            "year": "ano, anos",
            "weekend": "fim de semana, fim-de-semana, fds",
        }
    ),
    phrases=(
        Phrase(r"anteontem|antes de ontem", "the day before yesterday"),
        Phrase(r"depois de amanhã|depois de amanha", "the day after tomorrow"),
        Phrase(r"ontem(?: à noite| a noite)?", "yesterday"),
        Phrase(r"hoje", "today"),
        Phrase(r"(?<!de )(?<!da )(?<!esta )(?<!nesta )amanhã|(?<!de )(?<!da )amanha", "tomorrow"),
        Phrase(r"(?:há|ha|faz) {num} {unit}(?: atrás| atras)?", "{num} {unit}s ago"),
        Phrase(r"{num} {unit} (?:atrás|atras)", "{num} {unit}s ago"),
        Phrase(r"(?:daqui a|em|dentro de) {num} {unit}", "in {num} {unit}s"),
        Phrase(r"(?:na |no |nesta |neste |nessa |nesse )?{wd} passad[ao]", "last {wd}"),
        Phrase(r"(?:na |no )?(?:últim[ao]|ultim[ao]) {wd}", "last {wd}"),
        Phrase(r"(?:na |no )?(?:próxim[ao]|proxim[ao]) {wd}", "next {wd}"),
        Phrase(r"(?:na |no )?{wd} que vem", "next {wd}"),
        Phrase(r"(?:nesta|neste|nessa|nesse|esta|este) {wd}", "this {wd}"),
        Phrase(r"(?:na |no |a |o )?{unit} passad[ao]", "last {unit}"),
        Phrase(r"(?:na |no |a |o )?(?:últim[ao]|ultim[ao]) {unit}", "last {unit}"),
        Phrase(r"(?:na |no |a |o )?{unit} que vem", "next {unit}"),
        Phrase(r"(?:na |no |a |o )?(?:próxim[ao]|proxim[ao]) {unit}", "next {unit}"),
        Phrase(r"(?:neste|nesta|este|esta) {unit}", "this {unit}"),
        Phrase(r"(?:em )?{month} passado", "last {month}"),
    ),
    relations=words(
        {
            "friend": "amigo, amiga",
            "brother": "irmão, irmao",
            "sister": "irmã, irma",
            "husband": "marido, esposo",
            "wife": "esposa, mulher",
            "boyfriend": "namorado",
            "girlfriend": "namorada",
            "fiance": "noivo",
            "fiancee": "noiva",
            "partner": "companheiro, companheira",
            "mother": "mãe",
            "mom": "mamãe",
            "father": "pai",
            "dad": "papai",
            "son": "filho",
            "daughter": "filha",
            "cousin": "primo, prima",
            "aunt": "tia",
            "uncle": "tio",
            "nephew": "sobrinho",
            "niece": "sobrinha",
            "grandmother": "avó, avo",
            "grandma": "vó",
            "grandfather": "avô",
            "grandpa": "vô",
            "colleague": "colega",
            "boss": "chefe",
            "neighbour": "vizinho, vizinha",
            "roommate": "colega de quarto",
        }
    ),
    pets=words(
        {
            "pet": "bicho de estimação",
            "dog": "cachorro, cachorra, cão, cao, cadela",
            "puppy": "filhote",
            "cat": "gato, gata",
            "kitten": "gatinho, gatinha",
            "rabbit": "coelho",
            "hamster": "hamster",
            "guinea pig": "porquinho-da-índia",
            "parrot": "papagaio",
            "budgie": "periquito",
            "bird": "pássaro, passaro",
            "fish": "peixe",
            "turtle": "tartaruga",
            "horse": "cavalo",
            "pony": "pônei",
            "ferret": "furão",
        }
    ),
    possessives=("meu", "minha", "meus", "minhas", "nosso", "nossa", "nossos", "nossas"),
    naming=("se chama", "chama-se"),
)
