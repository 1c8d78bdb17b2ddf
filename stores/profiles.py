"""The profile, audit-log and settings side of :class:`~lamina.stores.chroma.ChromaMemoryStore`.

All three are keyed documents (looked up by namespace and key, never by similarity), each
in its own collection; see :mod:`.keyed`.
"""

from __future__ import annotations

import threading

from chromadb.api.models.Collection import Collection

from ..records.audit import AuditEntry
from ..records.model import Granularity, ProfileRecord, validate_namespace
from ..records.settings import NamespaceSettings
from .audited import land_pending
from .chroma_calls import ChromaCalls
from .keyed import KeyedDocuments, checked_model


class ProfilesAndAudit:
    """Profile and audit-log methods; the store sets the attributes below."""

    _lock: threading.RLock
    _calls: ChromaCalls
    _collections: dict[Granularity, Collection]
    _profiles: KeyedDocuments
    _audit: KeyedDocuments
    _settings: KeyedDocuments

    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store the profile of ``profile.namespace``, replacing the previous one."""
        checked = checked_model(profile, ProfileRecord, "profile")
        with self._lock:
            self._profiles.put(checked.namespace, "profile", checked, text=checked.render())
        return checked

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """Return the stored profile of ``namespace``, or None."""
        return self._profiles.get(namespace, "profile", ProfileRecord)

    def delete_profile(self, namespace: str) -> bool:
        """Delete the profile of ``namespace``; return whether there was one."""
        with self._lock:
            existed = self.get_profile(namespace) is not None
            if existed:
                self._profiles.delete(namespace, "profile")
        return existed

    def put_namespace_settings(self, settings: NamespaceSettings) -> NamespaceSettings:
        """Store the settings of ``settings.namespace``, replacing the previous ones."""
        checked = checked_model(settings, NamespaceSettings, "namespace settings")
        with self._lock:
            self._settings.put(checked.namespace, "settings", checked)
        return checked

    def get_namespace_settings(self, namespace: str) -> NamespaceSettings | None:
        """Return the stored settings of ``namespace``, or None (nothing was ever set)."""
        return self._settings.get(namespace, "settings", NamespaceSettings)

    def replace_audit(self, entry: AuditEntry) -> AuditEntry:
        """Overwrite a stored audit entry (same id), e.g. to redact forgotten content."""
        return self.append_audit(entry)

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append one entry to the namespace's audit log."""
        checked = checked_model(entry, AuditEntry, "audit entry")
        with self._lock:
            self._audit.put(checked.namespace, checked.id, checked, sort_key=checked.at.timestamp())
        return checked

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """Return the namespace's audit log, oldest first.

        Entries a supersede left pending in a fact row (the process died before moving
        them) are moved to the log first.
        """
        validate_namespace(namespace)
        with self._lock:
            land_pending(self._calls, self._collections[Granularity.FACT], self._audit, namespace)
        return self._audit.list(namespace, AuditEntry)
