"""The one exception hierarchy of lamina.

Every error the package raises on purpose derives from :class:`LaminaError`. Input
errors also derive from the built-in ``ValueError`` / ``TypeError`` so callers that
already catch those keep working.
"""

from __future__ import annotations


class LaminaError(Exception):
    """Base class for every error lamina raises on purpose."""

    retryable: bool = False
    """Whether the same call, sent again unchanged once the cause has passed, can succeed:
    nothing of it was kept, so retrying it is safe (see :class:`StoreUnavailableError`)."""


class InvalidInputError(LaminaError, ValueError):
    """Input was rejected before anything was stored; the message says how to fix it."""


class InvalidTypeError(LaminaError, TypeError):
    """An argument had the wrong type; the message says which type was expected."""


class NamespaceError(InvalidInputError):
    """A namespace was missing, malformed, or did not match the record being written."""


class RecordNotFoundError(LaminaError, KeyError):
    """A record id does not exist in the requested namespace and granularity."""

    def __init__(
        self, message: str = "", *, ids: tuple[str, ...] = (), namespace: str | None = None
    ) -> None:
        super().__init__(message)
        self.ids = ids
        """The ids that name no record, when the raiser knows them."""
        self.namespace = namespace
        """The namespace they were looked up in, when known."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class EmbeddingError(LaminaError):
    """The embedding model could not be loaded or failed to embed."""


class StoreConfigurationError(LaminaError):
    """A store was opened with settings that contradict what it persisted."""


class LocalModelError(LaminaError):
    """A local chat model could not be found, assembled, or served."""


class MissingDependencyError(LaminaError, ImportError):
    """An optional dependency is needed; the message names the extra to install."""


class ModelUnreachableError(LaminaError):
    """No request could reach the chat model (refused, timed out, HTTP 401/403/404/5xx).

    The message names the endpoint and the model and says how to start one.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        model: str | None = None,
        reason: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        """The endpoint's base URL, when the chat model exposes it."""
        self.model = model
        """The model name sent to the endpoint, when known."""
        self.reason = reason
        """``connection failed``, ``timed out`` or ``HTTP <status>``."""


class StoreUnavailableError(LaminaError):
    """The store's server (Chroma or Postgres) could not be reached, or died during a call.

    Retryable: the call was rolled back (Postgres) or is idempotent by record id, so once
    the server is back, sending it again resumes without duplicates. The message names
    the server (host, port and database; never a password).
    """

    retryable = True


class ConsolidationPendingError(LaminaError, TimeoutError):
    """Background consolidation did not finish in time; the turns stay pending, stored.

    ``pending`` is how many raw turns still await it (in the namespace asked, or in all).
    """

    def __init__(self, message: str, *, pending: int) -> None:
        super().__init__(message)
        self.pending = pending


class ConsolidationBacklogError(LaminaError):
    """A background ``add`` found the worker's queue full and waited in vain.

    Nothing of the call was stored, so it can be sent again.
    """


class StatementTimeoutError(LaminaError):
    """The database cancelled a statement that ran past its time limit; nothing was kept.

    The message names the setting (``statement_timeout``, or ``lock_timeout`` for a wait
    on a lock), its value and how to raise it. Not retryable as it is: the same statement
    will likely run as long again.
    """

    def __init__(self, message: str, *, setting: str, value: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting
        """The server setting that limited the statement."""
        self.value = value
        """Its value for the connection, as the server shows it (e.g. ``50ms``)."""
