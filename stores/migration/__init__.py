"""Moving a lamina store from Chroma to Postgres (``lamina migrate``).

:class:`ChromaSource` reads a lamina Chroma folder (a private copy of it: the folder is
never opened by Chroma, which would write to it); :func:`migrate`
copies every namespace's records (with their vectors), profile, audit log and settings
(its default TTL) into a
:class:`~lamina.stores.postgres.PostgresMemoryStore` and returns a
:class:`MigrationReport` of the counts on both sides. Running it again writes nothing
new. (The Postgres schema's own versions are migrated by the store itself when it opens:
:mod:`lamina.stores.postgres.schema`.)
"""

from .report import KINDS, Count, MigrationReport
from .source import ChromaSource, chroma_folder
from .transfer import migrate

__all__ = ["KINDS", "ChromaSource", "Count", "MigrationReport", "chroma_folder", "migrate"]
