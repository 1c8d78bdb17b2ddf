"""Which Postgres text-search configuration indexes a record: per record, ``simple`` fallback."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...records.model import MemoryRecord

LanguageOf = Callable[[MemoryRecord], str | None]
"""The text-search configuration of a record (None: the store's default)."""

ISO_LANGUAGES: Mapping[str, str] = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish",
    "nl": "dutch", "en": "english", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian",
    "ga": "irish", "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "es": "spanish",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
"""ISO 639-1 codes of the text-search configurations Postgres ships."""


def metadata_language(record: MemoryRecord) -> str | None:
    """The configuration named by ``record.metadata["language"]`` (a name or ISO code)."""
    value = record.metadata.get("language")
    if not isinstance(value, str):
        return None
    value = value.strip().lower()
    return ISO_LANGUAGES.get(value, value)
