"""The write side of :class:`~memstrata.Memory` beyond ``add``: forget.

Every call changes one namespace only and leaves an audit entry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..config import MemoryConfig
from ..results import ForgetResult
from ..stores.chroma import ChromaMemoryStore
from ..stores.forgetting import forget as forget_records
from .inputs import optional_text, require_bool, require_ids, require_namespace
from .lookup import known_ids, not_found


class EditMethods:
    """Forget, mixed into :class:`~memstrata.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig

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
        mentions it, case-insensitively) or ``all=True`` (the whole namespace).

        Raises:
            RecordNotFoundError: An id in ``memory_ids`` names no stored memory of
                ``namespace``; nothing is deleted.
        """
        require_namespace(namespace)
        require_bool("all", all)
        optional_text("subject", subject)
        ids = require_ids(memory_ids) if memory_ids != () else []
        if ids:
            known = known_ids(self.store, namespace, ids)
            unknown = [i for i in dict.fromkeys(ids) if i not in known]
            if unknown:
                raise not_found(namespace, unknown)
        return forget_records(
            self.store, namespace, memory_ids=ids, subject=subject, everything=all
        )

    async def aforget(
        self,
        *,
        namespace: str,
        memory_ids: Sequence[str] = (),
        subject: str | None = None,
        all: bool = False,
    ) -> ForgetResult:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(
            self.forget, namespace=namespace, memory_ids=memory_ids, subject=subject, all=all
        )
