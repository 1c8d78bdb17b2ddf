"""Profiles, the audit log and settings of the Postgres store: keyed JSON per namespace."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from ...records.audit import AuditEntry
from ...records.model import ProfileRecord, validate_namespace
from ...records.settings import NamespaceSettings
from ..keyed import checked_model
from .connections import Transactions
from .schema import Names


def body_query(names: Names, table: str) -> sql.Composed:
    """The statement reading the one JSON body of a namespace in ``table``."""
    return sql.SQL("SELECT body FROM {} WHERE namespace = %s").format(names(table))


def audit_query(names: Names) -> sql.Composed:
    """The statement reading a namespace's audit log, oldest first."""
    return sql.SQL("SELECT body FROM {} WHERE namespace = %s ORDER BY at, written").format(
        names("audit")
    )


class ProfilesAndAudit(Transactions):
    """Profile and audit-log methods; the store sets ``names``."""

    names: Names

    def _put_body(self, table: str, checked: ProfileRecord | NamespaceSettings) -> None:
        statement = sql.SQL(
            "INSERT INTO {} (namespace, body) VALUES (%s, %s) "
            "ON CONFLICT (namespace) DO UPDATE SET body = EXCLUDED.body"
        ).format(self.names(table))
        with self.atomic() as conn:
            conn.execute(statement, [checked.namespace, checked.model_dump_json()])

    def _body(self, table: str, namespace: str) -> str | None:
        with self.atomic() as conn:
            row = conn.execute(
                body_query(self.names, table), [validate_namespace(namespace)]
            ).fetchone()
        return None if row is None else str(row[0])

    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store the profile of ``profile.namespace``, replacing the previous one."""
        checked = checked_model(profile, ProfileRecord, "profile")
        self._put_body("profiles", checked)
        return checked

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """Return the stored profile of ``namespace``, or None."""
        body = self._body("profiles", namespace)
        return None if body is None else ProfileRecord.model_validate_json(body)

    def delete_profile(self, namespace: str) -> bool:
        """Delete the profile of ``namespace``; return whether there was one."""
        statement = sql.SQL("DELETE FROM {} WHERE namespace = %s").format(self.names("profiles"))
        with self.atomic() as conn:
            return conn.execute(statement, [validate_namespace(namespace)]).rowcount > 0

    def put_namespace_settings(self, settings: NamespaceSettings) -> NamespaceSettings:
        """Store the settings of ``settings.namespace``, replacing the previous ones."""
        checked = checked_model(settings, NamespaceSettings, "namespace settings")
        self._put_body("namespace_settings", checked)
        return checked

    def get_namespace_settings(self, namespace: str) -> NamespaceSettings | None:
        """Return the stored settings of ``namespace``, or None (nothing was ever set)."""
        body = self._body("namespace_settings", namespace)
        return None if body is None else NamespaceSettings.model_validate_json(body)

    def _put_audit(self, conn: psycopg.Connection[Any], entry: AuditEntry) -> None:
        statement = sql.SQL(
            "INSERT INTO {} (namespace, id, at, body) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (namespace, id) DO UPDATE SET at = EXCLUDED.at, body = EXCLUDED.body"
        ).format(self.names("audit"))
        conn.execute(statement, [entry.namespace, entry.id, entry.at, entry.model_dump_json()])

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append one entry to the namespace's audit log."""
        checked = checked_model(entry, AuditEntry, "audit entry")
        with self.atomic() as conn:
            self._put_audit(conn, checked)
        return checked

    def replace_audit(self, entry: AuditEntry) -> AuditEntry:
        """Overwrite a stored audit entry (same id), e.g. to redact forgotten content."""
        return self.append_audit(entry)

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """Return the namespace's audit log, oldest first."""
        with self.atomic() as conn:
            rows = conn.execute(audit_query(self.names), [validate_namespace(namespace)]).fetchall()
        return [AuditEntry.model_validate_json(r[0]) for r in rows]
