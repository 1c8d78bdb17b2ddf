"""The write side of :class:`~lamina.Memory` beyond ``add``: update, delete, forget.

Every call changes one namespace only and leaves an audit entry. None calls an LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..config import MemoryConfig
from ..errors import NamespaceError
from ..records.model import utc_now
from ..stores.chroma import ChromaMemoryStore
from .erasure import erase_memory_files
from .forget import forget as forget_records
from .inputs import (
    require_aware,
    require_bool,
    require_ids,
    require_namespace,
    require_query,
)
from .lookup import find_record, known_ids, not_found
from .results import ForgetResult
from .revision import UpdateResult, update_record, version_ids
from .twins import in_thread


class EditMethods:
    """Update, delete, delete_all and forget, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig
    checkpointer: BaseCheckpointSaver[Any] | None
    _own_persistent_store: bool
    _own_postgres_store: bool

    def _erased(self, namespace: str, result: ForgetResult) -> ForgetResult:
        """Erase what the forget removed from this Memory's own files too (:mod:`.erasure`)."""
        if result.deleted or result.updated:
            erase_memory_files(
                self.config,
                namespace,
                own_persistent_store=self._own_persistent_store,
                own_postgres_store=self._own_postgres_store,
                checkpointer=self.checkpointer,
            )
        return result

    def update(
        self, memory_id: str, text: str, *, namespace: str, at: datetime | None = None
    ) -> UpdateResult:
        """Give a memory new text; the old text is kept, never overwritten without trace.

        A fact is superseded by a new fact (a new id, in ``UpdateResult.id``); the old
        one stays for :meth:`history` and ``as_of`` searches. A raw turn, an episode or
        a scene is revised in place and its audit entry keeps the old text. See
        :mod:`lamina.memory.revision`.

        Args:
            memory_id: The memory to update.
            text: Its new text.
            namespace: The namespace it belongs to.
            at: When the change took effect (aware). A superseded fact is valid until
                then. Default: the newest turn of the conversation said after the fact
                (else its own newest source turn); the clock only when the namespace
                holds no turn, and the audit entry says so.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``.
            InvalidInputError: The fact was already superseded, or the raw turn has
                memories derived from it (update those instead).
        """
        require_query("memory_id", memory_id)
        require_query("text", text)
        require_namespace(namespace)
        record = find_record(self.store, namespace, memory_id)
        tz = self.config.memory_context(namespace).tz
        when = require_aware("at", at)
        return update_record(self.store, record, text, utc_now(), tz, when)

    aupdate = in_thread(update)
    """Async :meth:`update`, with the same arguments (run in a worker thread)."""

    def delete(self, memory_id: str, *, namespace: str) -> ForgetResult:
        """Forget one memory, its earlier versions and what was derived only from them.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``; nothing
                is deleted.
        """
        require_query("memory_id", memory_id)
        require_namespace(namespace)
        if not known_ids(self.store, namespace, [memory_id]):
            raise not_found(namespace, [memory_id])
        ids = version_ids(self.store, namespace, memory_id)
        return self._erased(namespace, forget_records(self.store, namespace, memory_ids=ids))

    adelete = in_thread(delete)
    """Async :meth:`delete`, with the same arguments (run in a worker thread)."""

    def delete_all(self, *, namespace: str | None = None) -> ForgetResult:
        """Forget every memory of exactly one namespace, leaving a tombstone.

        There is no default and no wildcard: without an explicit namespace nothing is
        deleted, so a missing user id can never wipe every user's memories.

        Raises:
            NamespaceError: No namespace, or a malformed one.
        """
        if namespace is None:
            raise NamespaceError(
                "delete_all() needs namespace=, the one scope to wipe (e.g. 'user:alice'); "
                "it never deletes across namespaces, and nothing was deleted"
            )
        return self.forget(namespace=require_namespace(namespace), all=True)

    adelete_all = in_thread(delete_all)
    """Async :meth:`delete_all`, with the same arguments (run in a worker thread)."""

    def forget(
        self,
        *,
        namespace: str,
        memory_ids: Sequence[str] = (),
        subject: str | None = None,
        all: bool = False,
    ) -> ForgetResult:
        """Delete memories and everything derived only from them; leave a tombstone.

        Exactly one selector: ``memory_ids``, ``subject`` (every record whose content
        mentions it, case-insensitively) or ``all=True`` (the whole namespace). On a
        store with transactions (Postgres) the whole forget, tombstone included, is one
        transaction: it lands whole or not at all. When it returns, neither the store's
        files nor this Memory's checkpoints and reply cache hold what it removed
        (docs/concepts/forgetting.md says what each backend cannot erase).

        Raises:
            RecordNotFoundError: An id in ``memory_ids`` names no stored memory of
                ``namespace``; nothing is deleted.
        """
        require_namespace(namespace)
        require_bool("all", all)
        if subject is not None:
            require_query("subject", subject)
        ids = require_ids(memory_ids) if memory_ids != () else []
        if ids:
            known = known_ids(self.store, namespace, ids)
            unknown = [i for i in dict.fromkeys(ids) if i not in known]
            if unknown:
                raise not_found(namespace, unknown)
        result = forget_records(
            self.store, namespace, memory_ids=ids, subject=subject, everything=all
        )
        return self._erased(namespace, result)

    aforget = in_thread(forget)
    """Async :meth:`forget`, with the same arguments (run in a worker thread)."""
