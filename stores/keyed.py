"""Side collections of keyed JSON documents: per-namespace profiles and the audit log.

They are looked up by namespace and key, never by similarity, so they carry a constant
placeholder vector instead of an embedding.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar, cast

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from pydantic import BaseModel, ValidationError

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import validate_namespace
from .chroma_calls import ChromaCalls

M = TypeVar("M", bound=BaseModel)
_PLACEHOLDER_VECTOR = [1.0, 0.0]
_BODY = "body"


def namespace_where(namespace: str) -> Any:
    """A Chroma ``where`` clause selecting one namespace."""
    return {"namespace": {"$eq": namespace}}


class KeyedDocuments:
    """Pydantic documents stored as JSON under ``(namespace, key)`` in one collection."""

    def __init__(
        self,
        client: ClientAPI,
        name: str,
        schema_version: int,
        calls: ChromaCalls | None = None,
    ) -> None:
        self._collection = client.get_or_create_collection(
            name, metadata={"lamina_schema": schema_version}, embedding_function=None
        )
        self._calls = calls or ChromaCalls("Chroma", threading.RLock())
        self.collection_id = self._collection.id
        """The collection's id (an erasure scrubs what Chroma keeps of it, by id)."""

    def put(
        self,
        namespace: str,
        key: str,
        document: BaseModel,
        *,
        text: str = "",
        sort_key: float = 0.0,
    ) -> None:
        """Insert or replace the document stored under ``key``."""
        validate_namespace(namespace)
        self._calls.write(
            self._collection.upsert,
            ids=[f"{namespace}|{key}"],
            embeddings=cast(Any, [_PLACEHOLDER_VECTOR]),
            documents=[text or key],
            metadatas=cast(
                Any,
                [{"namespace": namespace, "sort": sort_key, _BODY: document.model_dump_json()}],
            ),
        )

    def get(self, namespace: str, key: str, model: type[M]) -> M | None:
        """Return the document under ``key``, or None."""
        rows = self._calls.read(
            self._collection.get,
            ids=[f"{validate_namespace(namespace)}|{key}"],
            where=namespace_where(namespace),
            include=["metadatas"],
        )
        metas = rows["metadatas"] or []
        return model.model_validate_json(str(metas[0][_BODY])) if metas else None

    def list(self, namespace: str, model: type[M]) -> list[M]:
        """Return every document of ``namespace``, ordered by their sort key."""
        rows = self._calls.read(
            self._collection.get,
            where=namespace_where(validate_namespace(namespace)),
            include=["metadatas"],
        )
        metas = sorted(rows["metadatas"] or [], key=lambda m: float(cast(Any, m["sort"])))
        return [model.model_validate_json(str(m[_BODY])) for m in metas]

    def delete(self, namespace: str, key: str) -> None:
        """Remove the document under ``key``, if any."""
        self._calls.write(self._collection.delete, ids=[f"{validate_namespace(namespace)}|{key}"])

    def delete_namespace(self, namespace: str) -> None:
        """Remove every document of ``namespace``."""
        where = namespace_where(validate_namespace(namespace))
        self._calls.write(self._collection.delete, where=where)


def every_document(
    calls: ChromaCalls, collection: Collection, model: type[M]
) -> list[tuple[str, M]]:
    """``(namespace, document)`` for every document of a keyed collection, by sort key.

    Reads only, so a store's folder can be read without being changed (``lamina migrate``).
    """
    rows = calls.read(collection.get, include=["metadatas"])
    metas = sorted(rows["metadatas"] or [], key=lambda m: float(cast(Any, m["sort"])))
    return [(str(m["namespace"]), model.model_validate_json(str(m[_BODY]))) for m in metas]


def checked_model(value: object, model: type[M], what: str) -> M:
    """Re-validate a pydantic document before it is stored; raise a fix-it error."""
    if not isinstance(value, model):
        raise InvalidTypeError(f"expected a {model.__name__}, got {type(value).__name__}")
    try:
        return model.model_validate(value.model_dump())
    except ValidationError as e:
        raise InvalidInputError(f"invalid {what}: {e}") from e
