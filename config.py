"""``MemoryConfig``: every setting of the :class:`~lamina.Memory` facade in one place.

Explicit arguments come first. :meth:`MemoryConfig.from_env` is the only code in
lamina that reads ``LAMINA_*`` / ``OPENAI_*`` variables or a TOML config file, and
even there an explicit override always wins: defaults < TOML file < environment < explicit
arguments.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from .core.context import SMALL_MODEL_PROFILE, MemoryContext, check_fields
from .core.former_name import old_folders
from .errors import InvalidInputError, StoreConfigurationError

StoreKind = Literal["persistent", "memory", "http", "postgres"]
CheckpointKind = Literal["none", "memory", "sqlite", "postgres"]
CHECKPOINTER_WORDS = ("auto", "none", "memory", "sqlite", "postgres")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
POSTGRES_SCHEMES = ("postgresql", "postgres")
_PREFIX = re.compile(r"[a-z][a-z0-9_]{0,62}")
LOCAL_MODELS = ("qwen", "smollm2")
ENV_PREFIX = "LAMINA_"
CONFIG_FILE_VAR = "LAMINA_CONFIG"
ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "store": ("LAMINA_DSN", "LAMINA_POSTGRES_DSN"),
    "openai_api_key": ("OPENAI_API_KEY",),
    "openai_base_url": ("OPENAI_BASE_URL",),
    "model": ("OPENAI_MODEL",),
}
"""Standard variables read after the ``LAMINA_<FIELD>`` name (which wins)."""
RETIRED: Mapping[str, str] = {
    "temperature": "lamina samples at temperature 0 (lamina.memory.models.TEMPERATURE); "
    "give Memory a chat model of your own for another",
    "max_retries": "HTTP retries per request are lamina.memory.models.MAX_RETRIES (2)",
    "local_startup_timeout": "the local model may take "
    "lamina.memory.models.LOCAL_STARTUP_TIMEOUT (300 s) to load",
    "structured_method": "structured calls ask for a JSON schema and fall back to JSON mode; "
    "build_memory_graph(structured_method=...) for a graph of your own",
    "max_llm_attempts": "build_memory_graph(max_attempts=...) (default 3) for a graph of your own",
    "chroma_path": "the persistent Chroma is <data_dir>/chroma; set data_dir",
    **dict.fromkeys(
        ("chroma_host", "chroma_port", "chroma_ssl", "chroma_url"),
        "store (LAMINA_STORE) names the Chroma server, e.g. store='https://chroma.internal:8000'",
    ),
    "chroma_mode": "store (LAMINA_STORE): 'chroma' (persistent, the default), 'memory' "
    "(ephemeral) or a server's http(s)://host:port",
    "max_tokens": "every request generates at most lamina.memory.models.MAX_TOKENS (1024) "
    "tokens, and most steps cap their own reply lower; give Memory a chat model of your own "
    "for another cap",
    "local_threads": "the offline model runs on half the CPUs (lamina.llm.default_threads); "
    "`lamina serve-llm --threads N` serves it with N, or give Memory local_server_factory=",
    "local_ctx": "the offline model's window is lamina.memory.models.LOCAL_CONTEXT (8192 "
    "tokens); `lamina serve-llm --ctx N` serves it with N, or give Memory "
    "local_server_factory=",
    **dict.fromkeys(
        ("backend", "dsn"),
        "store (LAMINA_STORE) says where memory lives; a Postgres DSN there "
        "(store='postgresql://user:password@host:5432/db', or LAMINA_POSTGRES_DSN alone) "
        "is the postgres backend",
    ),
    **dict.fromkeys(
        ("collection_prefix", "postgres_schema"),
        "prefix (LAMINA_PREFIX) names the Chroma collections (<prefix>_raw, ...) and the "
        "Postgres schema alike",
    ),
    "sqlite_path": "checkpointer (LAMINA_CHECKPOINTER) takes the SQLite file itself, "
    "e.g. checkpointer='/srv/lamina/checkpoints.sqlite'",
    "postgres_uri": "checkpointer (LAMINA_CHECKPOINTER) takes the Postgres URI itself "
    "(checkpointer='postgresql://...'); 'postgres' or 'auto' use the store's own database",
    "background_max_pending": "a background add may leave "
    "lamina.memory.background.MAX_PENDING (1000) turns waiting for the worker",
    "background_wait": "a background add waits lamina.memory.background.BACKLOG_WAIT "
    "(30 s) for room in the worker's queue",
    "construction_journal": "a Memory that opens its own persistent Chroma always keeps "
    "the construction replies in <data_dir>/construction_journal.sqlite",
}
"""Former :class:`MemoryConfig` fields and where each went: given as an argument, a
config-file key or a ``LAMINA_<NAME>`` variable, each is refused with this message."""
CONTEXT_ENV = ("trigger_policy", "timezone")
"""MemoryContext fields settable as ``LAMINA_TRIGGER_POLICY`` / ``LAMINA_TIMEZONE``."""
DEFAULT_CHROMA_PORT = 8000
"""The port ``chroma run`` serves on, for a Chroma server URL that names none."""


def default_data_dir() -> Path:
    """Where the persistent Chroma and checkpoints live.

    ``$XDG_DATA_HOME/lamina`` when that variable is set, else ``~/.local/share/lamina``
    (the XDG base directory rule the model cache follows with ``XDG_CACHE_HOME``).
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lamina"


def old_data_folder() -> Path | None:
    """A data folder under the old name, if one exists.

    ``$XDG_DATA_HOME/<old name>`` or ``~/.local/share/<old name>`` (the old default
    ignored ``XDG_DATA_HOME``; :data:`~lamina.core.former_name.OLD_NAME`). lamina never
    reads it; the command line says where it is and how to move it.
    """
    found = old_folders(os.environ.get("XDG_DATA_HOME"), Path.home() / ".local" / "share")
    return found[0] if found else None


def data_dir_source() -> str | None:
    """What sets the data folder when no option does.

    ``LAMINA_DATA_DIR``, ``data_dir in FILE`` (the ``LAMINA_CONFIG`` file), or None for
    :func:`default_data_dir`.
    """
    if (os.environ.get(ENV_PREFIX + "DATA_DIR") or "").strip():
        return ENV_PREFIX + "DATA_DIR"
    path = os.environ.get(CONFIG_FILE_VAR) or None
    if path and "data_dir" in _read_toml(Path(path)):
        return f"data_dir in {path}"
    return None


class MemoryConfig(BaseModel):
    """Settings of a :class:`~lamina.Memory`; immutable, validated on construction.

    The defaults run fully offline: a persistent Chroma under ``data_dir``, the offline
    MiniLM embedder, and the local Qwen model served in-process by llama.cpp.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Folder of everything lamina keeps on this machine: the persistent "
        "Chroma (<data_dir>/chroma), the SQLite checkpoints and the construction journal. "
        "The default follows the XDG rule, so memory outlives the process and the "
        "working directory.",
    )
    store: str = Field(
        default="chroma",
        repr=False,  # shown with its password hidden (__repr_args__)
        description="Where memory lives. 'chroma' (the default): a persistent Chroma in "
        "<data_dir>/chroma, on disk with no server, which is what one process on one "
        "machine needs. 'memory': an in-memory Chroma that keeps nothing (tests, trials). "
        "http://host:port or https://host:port: a `chroma run` server (port 8000 when the "
        "URL names none), for several processes. postgresql://user:password@host:5432/db: "
        "Postgres with pgvector, for a deployment; its password never appears in a repr "
        "or a log. LAMINA_STORE, or LAMINA_POSTGRES_DSN / LAMINA_DSN for a Postgres DSN.",
    )
    prefix: str = Field(
        default="lamina",
        description="The name lamina's data goes under in a shared store: the Chroma "
        "collections <prefix>_raw, <prefix>_fact, ... and the Postgres schema <prefix>. "
        "Two applications (or two embedders) on one server need a prefix each; one "
        "application keeps the default.",
    )

    openai_base_url: str | None = Field(
        default=None,
        description="An OpenAI-compatible endpoint (vLLM, Ollama, a `lamina serve-llm`, a "
        "hosted API) that replaces the offline model. None by default, so lamina runs "
        "offline and sends nothing off the machine until told to.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        description="API key of the endpoint; set alone, it means api.openai.com. Kept "
        "secret in reprs; None by default, as for the endpoint.",
    )
    model: str | None = Field(
        default=None,
        description="Chat model name at the endpoint. None picks gpt-4o-mini at OpenAI (a "
        "cheap model that follows lamina's structured replies) and the server's own model "
        "name elsewhere.",
    )
    timeout: float = Field(
        default=300.0,
        gt=0,
        description="Seconds one LLM request may take before it fails. 300 s covers a long "
        "construction reply from the offline model on two busy cores; an endpoint answers "
        "far sooner, so a lower value only fails a stalled request earlier.",
    )

    local_model: str = Field(
        default="qwen",
        description="The offline model when no endpoint is set: qwen (Qwen2.5-Coder-1.5B, "
        "the default: the model lamina's construction and recall were tuned on, fast enough "
        "on a laptop's CPU), smollm2 (smaller and weaker, for tests) or a .gguf path. It "
        "runs in-process with llama.cpp, on half the CPUs with an 8,192-token window "
        "(lamina.memory.models.LOCAL_CONTEXT); `lamina serve-llm` takes --threads and --ctx.",
    )
    local_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Loopback port of the offline model's server. None (the default) picks "
        "a free port, so two processes never collide. Set it to the port of a `lamina "
        "serve-llm --port N` left running: a process finding the configured model served "
        "there uses it instead of loading its own copy (each `lamina ask` then skips the "
        "model's load).",
    )

    context: dict[str, Any] = Field(
        default_factory=dict,
        description="MemoryContext values for every call (timezone, trigger_policy, "
        "small_model, context_tokens), each documented on MemoryContext; the namespace is "
        "set per call. Empty by default: the context's own defaults, and the small-model "
        "profile when the offline model runs.",
    )
    instructions: str | None = Field(
        default=None,
        description="The application's rules for what construction keeps or leaves out "
        "('only the user's preferences and plans', 'never store health data'), for every "
        "add; see MemoryContext.instructions. None by default: lamina keeps what its own "
        "rules keep. A context['instructions'] or a call's own wins.",
    )

    checkpointer: str = Field(
        default="auto",
        repr=False,  # shown with its password hidden (__repr_args__)
        description="Where the memory graph keeps its checkpoints, so that an add that was "
        "interrupted (process killed, Ctrl-C) resumes from its last step when the same add "
        "is called again. 'auto' (the default): <data_dir>/checkpoints.sqlite beside a "
        "persistent Chroma, the store's own database for a Postgres store (one DSN is all "
        "a deployment configures), and none for a store that keeps nothing or one given "
        "to Memory. 'none', 'memory', 'sqlite' (<data_dir>/checkpoints.sqlite), "
        "'postgres' (the Postgres store's database), a SQLite file (*.sqlite, *.sqlite3, "
        "*.db) or a postgresql:// URI of its own.",
    )
    sweep_interval_minutes: float | None = Field(
        default=None,
        gt=0,
        description="Forget expired memories (add(..., expires_at=/ttl=)) this often, on a "
        "thread the Memory owns. None (the default): only when sweep_expired() is called, "
        "so a Memory starts no thread of its own unless asked; reads leave expired "
        "memories out from the moment they expire either way.",
    )

    @field_validator("store")
    @classmethod
    def _store(cls, value: str) -> str:
        value = value.strip()
        if value in ("chroma", "memory"):
            return value
        try:
            url = urlsplit(value)
            url.port  # noqa: B018  # raises ValueError for a port out of range
        except ValueError as e:
            raise ValueError(f"store {redacted(value)!r}: {e}") from e
        if url.scheme in POSTGRES_SCHEMES:
            return value
        if url.scheme in ("http", "https") and url.hostname and not url.path.strip("/"):
            return value
        raise ValueError(
            "store must be 'chroma' (persistent, in data_dir), 'memory', a Chroma server's "
            "http(s)://host:port or a postgresql:// DSN, got " + repr(redacted(value))
        )

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not _PREFIX.fullmatch(value):
            raise ValueError(
                "prefix must be lower-case letters, digits and _, starting with a letter "
                f"(at most 63 characters: a Postgres schema name), got {value!r}"
            )
        return value

    @field_validator("checkpointer")
    @classmethod
    def _checkpointer(cls, value: str) -> str:
        value = value.strip()
        if value in CHECKPOINTER_WORDS or value.endswith(SQLITE_SUFFIXES):
            return value
        if urlsplit(value).scheme in POSTGRES_SCHEMES:
            return value
        raise ValueError(
            f"checkpointer must be one of {CHECKPOINTER_WORDS}, a SQLite file ending in "
            f"{SQLITE_SUFFIXES} or a postgresql:// URI, got {redacted(value)!r}"
        )

    @model_validator(mode="after")
    def _consistent(self) -> MemoryConfig:
        if self.local_model not in LOCAL_MODELS and not self.local_model.endswith(".gguf"):
            raise ValueError(
                f"local_model must be one of {LOCAL_MODELS} or a path ending in .gguf, "
                f"got {self.local_model!r}"
            )
        if "namespace" in self.context:
            raise ValueError("context must not set 'namespace'; pass namespace= to each call")
        self.memory_context("default")  # fails early on an unknown field or bad value
        if self.checkpointer == "postgres" and self.postgres_dsn is None:
            raise ValueError(
                "checkpointer='postgres' keeps the checkpoints in the Postgres store's "
                "database, and store is no postgresql:// DSN; give checkpointer a "
                "postgresql:// URI of its own, or 'sqlite'"
            )
        return self

    def __init__(self, **data: Any) -> None:
        _refuse_retired(data, "")
        try:
            super().__init__(**data)
        except ValidationError as e:  # the errors without their input: it may hold a DSN
            why = "; ".join(
                f"{'.'.join(map(str, err['loc'])) or 'MemoryConfig'}: {err['msg']}"
                for err in e.errors(include_url=False, include_input=False)
            )
            raise InvalidInputError(f"invalid lamina configuration: {why}") from None

    def __repr_args__(self) -> Any:
        yield from super().__repr_args__()
        yield "store", redacted(self.store)
        yield "checkpointer", redacted(self.checkpointer)

    @field_serializer("store", "checkpointer", when_used="json")
    def _hide_password(self, value: str) -> str:
        """A JSON dump hides the password, as a ``SecretStr`` does (``model_dump`` keeps it)."""
        return redacted(value)

    # ------------------------------------------------------------ derived values
    @property
    def store_kind(self) -> StoreKind:
        """What :attr:`store` names: persistent, memory, http (a Chroma server) or postgres."""
        if self.store in ("chroma", "memory"):
            return "persistent" if self.store == "chroma" else "memory"
        return "postgres" if urlsplit(self.store).scheme in POSTGRES_SCHEMES else "http"

    @property
    def postgres_dsn(self) -> str | None:
        """The DSN of a Postgres :attr:`store`, else None."""
        return self.store if self.store_kind == "postgres" else None

    @property
    def resolved_chroma_path(self) -> Path:
        """Where the persistent Chroma lives."""
        return self.data_dir / "chroma"

    @property
    def chroma_server(self) -> tuple[str, int, bool]:
        """``(host, port, ssl)`` of a Chroma server :attr:`store`."""
        url = urlsplit(self.store)
        return url.hostname or "", url.port or DEFAULT_CHROMA_PORT, url.scheme == "https"

    @property
    def resolved_journal_path(self) -> Path:
        """Where the construction journal lives."""
        return self.data_dir / "construction_journal.sqlite"

    @property
    def resolved_sqlite_path(self) -> Path:
        """Where the SQLite checkpointer writes.

        The file :attr:`checkpointer` names, else ``<data_dir>/checkpoints.sqlite``.
        """
        if self.checkpointer.endswith(SQLITE_SUFFIXES):
            return Path(self.checkpointer)
        return self.data_dir / "checkpoints.sqlite"

    @property
    def checkpoint_uri(self) -> str | None:
        """The Postgres database of a Postgres checkpointer.

        The URI :attr:`checkpointer` names, else the DSN of a Postgres :attr:`store` (so
        memory and checkpoints share one database).
        """
        if urlsplit(self.checkpointer).scheme in POSTGRES_SCHEMES:
            return self.checkpointer
        return self.postgres_dsn

    def checkpoint_kind(self, *, own_store: bool) -> CheckpointKind:
        """What :attr:`checkpointer` opens: ``auto`` resolved, a file or URI by its kind.

        Args:
            own_store: The Memory opened the store from this config; ``auto`` keeps
                checkpoints beside a persistent Chroma or in a Postgres store's database
                only then.
        """
        value = self.checkpointer
        if value == "auto":
            if own_store and self.store_kind == "persistent":
                return "sqlite"
            return "postgres" if own_store and self.store_kind == "postgres" else "none"
        if value.endswith(SQLITE_SUFFIXES):
            return "sqlite"
        if value in CHECKPOINTER_WORDS:
            return value  # type: ignore[return-value]  # none, memory, sqlite, postgres
        return "postgres"  # a postgresql:// URI

    @property
    def uses_endpoint(self) -> bool:
        """Whether an OpenAI-compatible endpoint (rather than the local model) is set."""
        return self.openai_base_url is not None or self.openai_api_key is not None

    def memory_context(
        self, namespace: str, *, small_model: bool | None = None, **overrides: Any
    ) -> MemoryContext:
        """A :class:`MemoryContext` for one call: the configured overrides, then ``overrides``.

        With ``small_model`` (default: when no endpoint is set, so the offline model
        runs) the small-model profile (:data:`~lamina.core.context.SMALL_MODEL_PROFILE`)
        comes first, under both; a model reached through an endpoint, or given to the
        facade, gets the library's defaults.
        """
        local = not self.uses_endpoint if small_model is None else small_model
        profile = dict(SMALL_MODEL_PROFILE) if local else {}
        given = {"instructions": self.instructions} if self.instructions is not None else {}
        values = {**profile, **given, **self.context, **overrides}
        check_fields(values)
        return MemoryContext(namespace=namespace, **values)

    # -------------------------------------------------------------------- edge
    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> MemoryConfig:
        """Read a TOML file (keys are field names, ``[context]`` a table); overrides win."""
        return cls(**{**_read_toml(Path(path)), **overrides})

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        config_file: str | Path | None = None,
        **overrides: Any,
    ) -> MemoryConfig:
        """Build a config from the environment and an optional TOML file.

        Args:
            env: The variables to read; ``None`` reads ``os.environ``.
            config_file: A TOML file; default ``$LAMINA_CONFIG`` if set.
            **overrides: Explicit field values; they beat the file and the environment.

        Raises:
            InvalidInputError: A value is malformed; the message names its variable.
            StoreConfigurationError: The config file is missing or not valid TOML.
        """
        env = os.environ if env is None else env
        path = config_file or env.get(CONFIG_FILE_VAR) or None
        values: dict[str, Any] = _read_toml(Path(path)) if path else {}
        _refuse_retired(values, f" (in {path})")
        aliases = {var for names in ENV_ALIASES.values() for var in names}
        _refuse_retired(
            {
                n: 1
                for n in RETIRED
                if ENV_PREFIX + n.upper() not in aliases  # LAMINA_DSN: a name of store
                and (env.get(ENV_PREFIX + n.upper()) or "").strip()
            },
            " (a LAMINA_ variable)",
        )
        context = dict(values.get("context") or {})
        for name in cls.model_fields:
            if name == "context":
                continue
            for var in (ENV_PREFIX + name.upper(), *ENV_ALIASES.get(name, ())):
                given = (env.get(var) or "").strip()
                if given:  # LAMINA_LOCAL_PORT=none: pick a free port
                    unset = name == "local_port" and given.lower() in ("none", "null")
                    values[name] = None if unset else given
                    break
        for name in CONTEXT_ENV:
            raw = env.get(ENV_PREFIX + name.upper())
            if raw:
                context[name] = raw
        if context:
            values["context"] = context
        if "context" in overrides:
            overrides["context"] = {**context, **overrides["context"]}
        return cls(**{**values, **overrides})


def redacted(value: str) -> str:
    """``value`` with the password of a URL in it (``user:password@``, ``password=``) hidden."""
    try:
        url = urlsplit(value)
    except ValueError:
        return value
    if not url.scheme or not url.netloc and "password" not in url.query:
        return value
    netloc = url.netloc
    if url.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", url.query)
    return url._replace(netloc=netloc, query=query).geturl()


def _refuse_retired(values: Mapping[str, Any], where: str) -> None:
    """Raise a fix-it :class:`InvalidInputError` for a former setting (:data:`RETIRED`)."""
    retired = sorted(set(values) & set(RETIRED))
    if retired:
        why = "; ".join(f"{name}: {RETIRED[name]}" for name in retired)
        raise InvalidInputError(f"MemoryConfig has no setting {retired}{where} any more: {why}")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError as e:
        raise StoreConfigurationError(
            f"config file {path} does not exist; create it or unset {CONFIG_FILE_VAR}"
        ) from e
    except tomllib.TOMLDecodeError as e:
        raise StoreConfigurationError(f"config file {path} is not valid TOML: {e}") from e
    section = data.get("lamina", data)
    if not isinstance(section, dict):
        raise StoreConfigurationError(f"config file {path}: [lamina] must be a table")
    return dict(section)
