"""A per-(granularity, namespace) change log in Chroma, so every process sees every write.

Each write through a :class:`~lamina.stores.chroma.ChromaMemoryStore` first lands
its rows, then claims the next slot ``n`` of its namespace's log: a row with id
``"<granularity>|<namespace>|<n>"`` listing the record ids it touched. Chroma's
``add`` never overwrites an existing id, so when two processes race for slot ``n``
exactly one row lands; the writer reads the slot back, and the loser moves on to
``n + 1``. The slots of a namespace therefore form one gap-free sequence.

A process that mirrors a namespace remembers the last slot it applied. Before each
search it reads the next slots (one ``get`` by id) and re-reads from Chroma the records
they name, so a write made anywhere is visible to the next search everywhere. The
records are re-read, never copied from the log, so the order in which slots are
applied does not matter. Old slots are pruned; a mirror that fell behind the pruned
part (its own last slot is gone) rebuilds itself from Chroma.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from chromadb.api import ClientAPI

from ..records.model import Granularity
from .chroma_calls import ChromaCalls
from .presence import Presence, Token

_PLACEHOLDER = [1.0, 0.0]
PROBE = 16
"""Slots read ahead by one check."""
HEAD_EVERY = 64
"""Every this many slots, the claimer records the position for cold starts."""
PRUNE_EVERY = 256
"""Every this many slots, the claimer deletes the slots older than :data:`KEEP`."""
KEEP = 512
"""Slots kept behind the newest one (a mirror further behind rebuilds itself)."""


@dataclass(frozen=True)
class Change:
    """One claimed slot: the record ids a write touched, or a reset of the namespace."""

    slot: int
    ids: tuple[str, ...]
    reset: bool = False


class ChangeLog:
    """The change log of every (granularity, namespace) pair, in one Chroma collection."""

    def __init__(
        self, client: ClientAPI, name: str, calls: ChromaCalls, presence: Presence | None = None
    ) -> None:
        self._collection = client.get_or_create_collection(
            name, metadata={"lamina_changelog": 1}, embedding_function=None
        )
        self._calls = calls
        self.collection_id = self._collection.id
        """Changes when the log's collection is deleted and made again."""
        self.writer = uuid.uuid4().hex
        """Identifies this store's claims."""
        self._known_end: dict[tuple[Granularity, str], int] = {}
        self.presence = presence
        """This store's registration in its folder; None: always shared (memory, server)."""
        self._write_token: Token | None = None

    # ---------------------------------------------------------------- presence
    def shared(self) -> bool:
        """Whether a write that just landed must claim a slot (call after its rows landed).

        True unless this store is registered and no other live registration is there (a
        look that fails says True). Alone after others came and went, the newest slots
        are read again, so an unclaimed write is labelled with the log's real end.
        """
        if self.presence is None:
            return True
        token = self.presence.token()
        if token is None or token[1]:
            self._write_token = None
            return True
        if not self.presence.quiet_since(self._write_token):
            self._known_end.clear()  # someone may have claimed since: read the ends again
        self._write_token = token
        return False

    def token(self) -> Token | None:
        """Taken before a mirror reads the log (or loads); see :meth:`quiet_since`."""
        return None if self.presence is None else self.presence.token()

    def quiet_since(self, token: Token | None) -> bool:
        """True when no other process can have claimed a slot since ``token`` was taken."""
        return self.presence is not None and self.presence.quiet_since(token)

    # ----------------------------------------------------------------- writers
    def claim(
        self, gran: Granularity, namespace: str, ids: list[str], *, reset: bool = False
    ) -> int:
        """Append one change (after its rows landed); return the slot it got."""
        key = _key(gran, namespace)
        n = self._known_end.get((gran, namespace))
        if n is None:
            n = self.end(gran, namespace)
        body = json.dumps(sorted(set(ids)))
        while True:
            n += 1
            slot_id = f"{key}|{n}"
            meta = {"key": key, "n": n, "writer": self.writer, "ids": body, "reset": reset}
            self._calls.write(
                self._collection.add,
                ids=[slot_id],
                embeddings=cast(Any, [_PLACEHOLDER]),
                metadatas=cast(Any, [meta]),
            )
            got = self._calls.read(self._collection.get, ids=[slot_id], include=["metadatas"])
            metas = got["metadatas"] or []
            if metas and metas[0].get("writer") == self.writer and metas[0].get("ids") == body:
                break
            n = self._scan_forward(key, n)  # lost the race: skip the slots taken since
        self._known_end[(gran, namespace)] = n
        if n % HEAD_EVERY == 0:
            self._set_head(key, n)
        if n % PRUNE_EVERY == 0 and n > KEEP:
            old = [f"{key}|{i}" for i in range(max(1, n - KEEP - PRUNE_EVERY + 1), n - KEEP + 1)]
            self._calls.write(self._collection.delete, ids=old)
        return n

    def _set_head(self, key: str, n: int) -> None:
        rows = self._calls.read(self._collection.get, ids=[f"{key}|head"], include=["metadatas"])
        metas = rows["metadatas"] or []
        if metas and int(cast(Any, metas[0]["n"])) >= n:
            return
        self._calls.write(
            self._collection.upsert,
            ids=[f"{key}|head"],
            embeddings=cast(Any, [_PLACEHOLDER]),
            metadatas=cast(Any, [{"key": key, "n": n, "head": True}]),
        )

    # ----------------------------------------------------------------- readers
    def end(self, gran: Granularity, namespace: str) -> int:
        """The newest slot of a namespace's log (0 when nothing was ever claimed)."""
        key = _key(gran, namespace)
        # One read answers for a young namespace (no head yet): the head and the first slots.
        wanted = [f"{key}|head"] + [f"{key}|{i}" for i in range(1, PROBE + 1)]
        rows = self._calls.read(self._collection.get, ids=wanted, include=["metadatas"])
        metas = rows["metadatas"] or []
        heads = [int(cast(Any, m["n"])) for m in metas if m.get("head")]
        present = {int(cast(Any, m["n"])) for m in metas if not m.get("head")}
        if heads:
            start = heads[0]
            if not self._exists(f"{key}|{start}"):
                start = self._scan_all(key)  # the head fell behind a prune: the slow way
            end = self._scan_forward(key, start)
        else:
            end = 0
            while end + 1 in present:
                end += 1
            if end == PROBE:
                end = self._scan_forward(key, end)
        self._known_end[(gran, namespace)] = max(end, self._known_end.get((gran, namespace), 0))
        return end

    def position(self, gran: Granularity, namespace: str) -> int:
        """The newest slot this store knows of (read once per namespace, then followed).

        It may lag other processes' claims; :meth:`claim` copes with that, and a writer
        uses it only to skip work that a namespace never written to cannot need.
        """
        known = self._known_end.get((gran, namespace))
        return self.end(gran, namespace) if known is None else known

    def since(
        self, gran: Granularity, namespace: str, slot: int
    ) -> tuple[list[Change], int] | None:
        """Changes after ``slot`` and the new position; None if ``slot`` was pruned."""
        return self.since_all(namespace, {gran: slot})[gran]

    def since_all(
        self, namespace: str, slots: Mapping[Granularity, int]
    ) -> dict[Granularity, tuple[list[Change], int] | None]:
        """:meth:`since` for several granularities of a namespace, in one ``get``.

        Another ``get`` follows only while a granularity has more than :data:`PROBE` new
        slots.
        """
        found: dict[Granularity, tuple[list[Change], int] | None] = {}
        reading = {gran: (slot, list[Change]()) for gran, slot in slots.items()}
        while reading:
            wanted = []
            for gran, (position, _) in reading.items():
                key, slot = _key(gran, namespace), slots[gran]
                wanted += [f"{key}|{position + i}" for i in range(1, PROBE + 1)]
                if position == slot:
                    wanted.append(f"{key}|{slot}" if slot > 0 else f"{key}|head")
            rows = self._calls.read(self._collection.get, ids=wanted, include=["metadatas"])
            by_key: dict[str, list[Any]] = {}
            for meta in rows["metadatas"] or []:
                by_key.setdefault(str(meta.get("key")), []).append(meta)
            for gran, (position, changes) in list(reading.items()):
                slot, metas = slots[gran], by_key.get(_key(gran, namespace), [])
                by_n = {int(cast(Any, m["n"])): m for m in metas if not m.get("head")}
                if position == slot and (
                    (slot > 0 and slot not in by_n)  # our last slot was pruned
                    or (slot == 0 and not by_n and any(m.get("head") for m in metas))
                ):
                    found[gran] = None
                    del reading[gran]
                    continue
                before = position
                while position + 1 in by_n:
                    position += 1
                    meta = by_n[position]
                    ids = tuple(json.loads(str(meta.get("ids") or "[]")))
                    changes.append(Change(position, ids, bool(meta.get("reset"))))
                reading[gran] = (position, changes)
                if position - before < PROBE:
                    found[gran] = (changes, position)
                    del reading[gran]
                    if position > self._known_end.get((gran, namespace), 0):
                        self._known_end[(gran, namespace)] = position
        return found

    def scrub(self, gran: Granularity, namespace: str, before: int) -> None:
        """Blank the record ids listed by the slots before ``before`` (after a reset there).

        The slots stay, so the sequence keeps no gap; a mirror that applies one simply
        rebuilds itself.
        """
        key = _key(gran, namespace)
        rows = self._calls.read(
            self._collection.get, where={"key": {"$eq": key}}, include=["metadatas"]
        )
        old = [
            (rid, m)
            for rid, m in zip(rows["ids"], rows["metadatas"] or [], strict=True)
            if not m.get("head") and int(cast(Any, m["n"])) < before and m.get("ids") != "[]"
        ]
        if old:
            self._calls.write(
                self._collection.upsert,
                ids=[rid for rid, _ in old],
                embeddings=cast(Any, [_PLACEHOLDER] * len(old)),
                metadatas=cast(Any, [{**m, "ids": "[]", "reset": True} for _, m in old]),
            )

    def _exists(self, slot_id: str) -> bool:
        return bool(self._calls.read(self._collection.get, ids=[slot_id], include=[])["ids"])

    def _scan_forward(self, key: str, start: int) -> int:
        """The last slot of the unbroken run that starts after ``start``."""
        end = start
        while True:
            wanted = [f"{key}|{end + i}" for i in range(1, PROBE + 1)]
            rows = self._calls.read(self._collection.get, ids=wanted, include=["metadatas"])
            present = {int(cast(Any, m["n"])) for m in rows["metadatas"] or [] if not m.get("head")}
            before = end
            while end + 1 in present:
                end += 1
            if end - before < PROBE:
                return end

    def _scan_all(self, key: str) -> int:
        rows = self._calls.read(
            self._collection.get, where={"key": {"$eq": key}}, include=["metadatas"]
        )
        slots = [int(cast(Any, m["n"])) for m in rows["metadatas"] or [] if not m.get("head")]
        return max(slots, default=0)


def _key(gran: Granularity, namespace: str) -> str:
    return f"{gran.value}|{namespace}"
