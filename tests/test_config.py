"""MemoryConfig: defaults, validation, and the env / TOML edge with explicit values winning."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from lamina import MemoryConfig
from lamina.config import RETIRED
from lamina.core.context import RETIRED as CONTEXT_RETIRED
from lamina.errors import InvalidInputError, StoreConfigurationError


def test_defaults_are_offline_and_under_the_data_dir(tmp_path: Path) -> None:
    config = MemoryConfig(data_dir=tmp_path)
    assert config.store_kind == "persistent" and config.prefix == "lamina"
    assert config.resolved_chroma_path == tmp_path / "chroma"
    assert config.resolved_sqlite_path == tmp_path / "checkpoints.sqlite"
    assert config.local_model == "qwen" and not config.uses_endpoint
    assert MemoryConfig().data_dir == Path.home() / ".local" / "share" / "lamina"


def test_the_config_is_immutable() -> None:
    config = MemoryConfig()
    with pytest.raises(Exception, match="frozen"):
        config.model = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"store": "cloud"},
        {"store": "http://chroma:70000"},
        {"store": "chroma:8000"},
        {"store": "ftp://chroma:8000"},
        {"store": "http://chroma:8000/some/path"},
        {"prefix": "My-App"},
        {"prefix": ""},
        {"checkpointer": "sqllite"},
        {"checkpointer": "postgres", "store": "memory"},
        {"timeout": -1},
        {"local_model": "llama3"},
        {"context": {"trigger_policy": "sometimes"}},
        {"context": {"context_tokens": 0}},
        {"context": {"no_such_field": 1}},
        {"context": {"namespace": "user:x"}},
        {"checkpointer": "postgres"},
        {"unknown_field": 1},
    ],
)
def test_bad_values_raise_invalid_input(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        MemoryConfig(**kwargs)  # type: ignore[arg-type]


def test_a_gguf_path_is_a_valid_local_model() -> None:
    assert MemoryConfig(local_model="/models/x.gguf").local_model == "/models/x.gguf"


def test_memory_context_applies_overrides_per_namespace() -> None:
    config = MemoryConfig(context={"trigger_policy": "eager", "context_tokens": 700})
    ctx = config.memory_context("user:bob")
    assert (ctx.namespace, ctx.trigger_policy, ctx.context_tokens) == ("user:bob", "eager", 700)
    assert config.memory_context("user:bob", context_tokens=900).context_tokens == 900


def test_from_env_maps_variables() -> None:
    env = {
        "LAMINA_DATA_DIR": "/srv/mem",
        "LAMINA_STORE": "https://chroma.internal:9000",
        "LAMINA_PREFIX": "app2",
        "OPENAI_API_KEY": "sk-abc",
        "OPENAI_BASE_URL": "http://llm:8080/v1",
        "OPENAI_MODEL": "qwen2.5",
        "LAMINA_LOCAL_PORT": "none",
        "LAMINA_TRIGGER_POLICY": "session",
        "LAMINA_TIMEZONE": "Europe/Berlin",
        "LAMINA_LOCAL_MODEL": "",
    }
    config = MemoryConfig.from_env(env)
    assert config.data_dir == Path("/srv/mem")
    assert (config.store_kind, config.prefix) == ("http", "app2")
    assert config.chroma_server == ("chroma.internal", 9000, True)
    assert MemoryConfig(store="http://10.0.0.2").chroma_server == ("10.0.0.2", 8000, False)
    assert config.openai_api_key is not None
    assert config.openai_api_key.get_secret_value() == "sk-abc"
    assert "sk-abc" not in repr(config)
    assert (config.openai_base_url, config.model) == ("http://llm:8080/v1", "qwen2.5")
    assert config.local_port is None and config.local_model == "qwen"
    assert config.context == {"trigger_policy": "session", "timezone": "Europe/Berlin"}
    assert config.uses_endpoint


def test_lamina_variables_beat_the_standard_openai_ones() -> None:
    env = {"OPENAI_MODEL": "a", "LAMINA_MODEL": "b"}
    assert MemoryConfig.from_env(env).model == "b"


def test_explicit_overrides_beat_env_and_file(tmp_path: Path) -> None:
    path = tmp_path / "lamina.toml"
    path.write_text(
        'model = "from-file"\ntimeout = 12.5\nlocal_port = 4096\n'
        '[context]\ntrigger_policy = "eager"\ncontext_tokens = 900\n'
    )
    env = {"LAMINA_CONFIG": str(path), "LAMINA_MODEL": "from-env"}
    config = MemoryConfig.from_env(env)
    assert (config.model, config.timeout, config.local_port) == ("from-env", 12.5, 4096)
    assert config.context == {"trigger_policy": "eager", "context_tokens": 900}
    explicit = MemoryConfig.from_env(
        env, model="explicit", local_port=2048, context={"trigger_policy": "session"}
    )
    assert (explicit.model, explicit.local_port) == ("explicit", 2048)
    assert explicit.context == {"trigger_policy": "session", "context_tokens": 900}


@pytest.mark.parametrize("name", sorted(CONTEXT_RETIRED))
def test_a_former_context_field_is_refused_with_where_it_went(name: str) -> None:
    """A former MemoryContext field in MemoryConfig.context names where it went."""
    with pytest.raises(InvalidInputError, match=f"no setting \\['{name}'\\]") as given:
        MemoryConfig(context={name: 1})
    assert CONTEXT_RETIRED[name] in str(given.value)


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_former_setting_is_refused_with_where_it_went(name: str, tmp_path: Path) -> None:
    """An argument, a config-file key or a LAMINA_ variable: each names the replacement."""
    with pytest.raises(InvalidInputError, match=f"no setting \\['{name}'\\]") as given:
        MemoryConfig(**{name: 1})
    assert RETIRED[name] in str(given.value)
    path = tmp_path / "lamina.toml"
    path.write_text(f"{name} = 1\n")
    with pytest.raises(InvalidInputError, match=f"in {path}"):
        MemoryConfig.from_env({"LAMINA_CONFIG": str(path)})
    if name == "dsn":  # LAMINA_DSN is still read: a name of store's DSN
        return
    with pytest.raises(InvalidInputError, match="a LAMINA_ variable"):
        MemoryConfig.from_env({f"LAMINA_{name.upper()}": "1"})


def test_one_store_setting_names_every_store(tmp_path: Path) -> None:
    """store: the persistent Chroma, an in-memory one, a Chroma server or Postgres."""
    assert MemoryConfig(store="memory").store_kind == "memory"
    assert MemoryConfig(store=" chroma ").store == "chroma"
    dsn = "postgresql://u:secret@db:5432/mem?sslmode=require&password=other"
    pg = MemoryConfig(store=dsn, prefix="app2")
    assert (pg.store_kind, pg.postgres_dsn, pg.prefix) == ("postgres", dsn, "app2")
    assert "secret" not in repr(pg) and "other" not in repr(pg) and "u:***@db" in repr(pg)
    assert "secret" not in str(pg)
    both = MemoryConfig(store=dsn, checkpointer="postgresql://u:secret@db/cp")
    assert "secret" not in both.model_dump_json() and "u:***@db" in both.model_dump_json()
    assert both.model_dump()["store"] == dsn  # a Python dump keeps what the code connects with
    with pytest.raises(InvalidInputError) as refused:  # an error never shows the password
        MemoryConfig(store="postgresql://u:secret@db:99999/mem")
    assert "secret" not in str(refused.value) and "store" in str(refused.value)
    for var in ("LAMINA_STORE", "LAMINA_POSTGRES_DSN", "LAMINA_DSN"):  # the DSN's variables
        assert MemoryConfig.from_env({var: dsn}).postgres_dsn == dsn
    assert MemoryConfig().postgres_dsn is None


def test_the_checkpointer_setting_takes_a_file_or_a_database(tmp_path: Path) -> None:
    """checkpointer: a word, a SQLite file or a Postgres URI; auto follows the store."""
    config = MemoryConfig(data_dir=tmp_path)
    assert config.checkpoint_kind(own_store=True) == "sqlite"
    assert config.checkpoint_kind(own_store=False) == "none"  # a store given to Memory
    assert MemoryConfig(store="memory").checkpoint_kind(own_store=True) == "none"
    db = tmp_path / "cp.sqlite"
    own_file = MemoryConfig(checkpointer=str(db))
    assert (own_file.checkpoint_kind(own_store=False), own_file.resolved_sqlite_path) == (
        "sqlite",
        db,
    )
    dsn = "postgresql://u:secret@db/mem"
    pg = MemoryConfig(store=dsn)
    assert (pg.checkpoint_kind(own_store=True), pg.checkpoint_uri) == ("postgres", dsn)
    own = "postgresql://u:other@db2/cp"
    apart = MemoryConfig(store=dsn, checkpointer=own)
    assert (apart.checkpoint_kind(own_store=True), apart.checkpoint_uri) == ("postgres", own)
    assert "other" not in repr(apart)
    assert MemoryConfig(store=dsn, checkpointer="postgres").checkpoint_uri == dsn
    assert MemoryConfig().checkpoint_uri is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"backend": "postgres"}, "store"),
        ({"chroma_mode": "http"}, "store"),
        ({"chroma_url": "http://h:1"}, "store"),
        ({"dsn": "postgresql://u:p@h/d"}, "store"),
        ({"collection_prefix": "app"}, "prefix"),
        ({"postgres_schema": "app"}, "prefix"),
        ({"sqlite_path": "/x/cp.sqlite"}, "checkpointer"),
        ({"postgres_uri": "postgresql://u:p@h/d"}, "checkpointer"),
    ],
)
def test_a_merged_setting_names_what_replaces_it(old: dict[str, str], new: str) -> None:
    with pytest.raises(InvalidInputError, match=f"{new} \\(LAMINA_{new.upper()}\\)"):
        MemoryConfig(**old)


def test_env_is_not_read_without_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live")
    monkeypatch.setenv("LAMINA_STORE", "http://chroma:8000")
    config = MemoryConfig()
    assert config.openai_api_key is None and config.store_kind == "persistent"
    assert MemoryConfig.from_env().store_kind == "http"  # None reads os.environ


def test_toml_with_a_lamina_table_and_explicit_path(tmp_path: Path) -> None:
    path = tmp_path / "pyproject-like.toml"
    path.write_text('[lamina]\nstore = "memory"\n')
    assert MemoryConfig.from_env({}, config_file=path).store_kind == "memory"
    assert MemoryConfig.from_toml(path, store="http://h:1").store_kind == "http"


def test_bad_env_values_and_files_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="store"):
        MemoryConfig.from_env({"LAMINA_STORE": "http://chroma:eighty"})
    with pytest.raises(StoreConfigurationError, match="does not exist"):
        MemoryConfig.from_env({"LAMINA_CONFIG": str(tmp_path / "missing.toml")})
    broken = tmp_path / "broken.toml"
    broken.write_text("model = ")
    with pytest.raises(StoreConfigurationError, match="not valid TOML"):
        MemoryConfig.from_toml(broken)


# ------------------------------------------------ the small-model profile
def test_the_offline_model_gets_the_small_model_profile_and_an_endpoint_does_not() -> None:
    from lamina.core.context import SMALL_MODEL_PROFILE

    local = MemoryConfig(store="memory").memory_context("ns")
    assert {k: getattr(local, k) for k in SMALL_MODEL_PROFILE} == dict(SMALL_MODEL_PROFILE)
    assert local.small_model is True
    remote = MemoryConfig(store="memory", openai_base_url="http://h:1/v1")
    assert remote.memory_context("ns").small_model is False  # no English rules for it
    # a configured setting wins over the profile, and the caller may say which model runs
    mixed = MemoryConfig(store="memory", context={"small_model": False})
    assert mixed.memory_context("ns").small_model is False
    assert remote.memory_context("ns", small_model=True).small_model is True
    offline = MemoryConfig(store="memory")
    assert offline.memory_context("ns", small_model=False).small_model is False


def test_a_model_given_to_the_facade_gets_the_librarys_defaults() -> None:
    from lamina import Memory
    from lamina.testing import FakeEmbeddings, SchemaChatModel

    config = MemoryConfig(store="memory")
    with Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel()) as m:
        assert m._models.small_model is False
        _, ctx = m._answer_request("what?", "ns", [], None)
        assert ctx.small_model is False
    with Memory(config=config, embeddings=FakeEmbeddings()) as offline:
        assert offline._models.small_model is True  # the model is not loaded to know it


# ------------------------------------------------ settings a user can read
MAX_SETTINGS = 20
"""Issue 63: at most 20 documented settings across MemoryConfig and MemoryContext."""


def context_docstrings() -> dict[str, str]:
    """Each MemoryContext field's attribute docstring, read from the class's source."""
    from lamina.core.context import MemoryContext

    body = ast.parse(inspect.getsource(MemoryContext)).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for node, after in zip(body.body, body.body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                docs[node.target.id] = str(after.value.value)
    return docs


def test_at_most_twenty_settings_each_documented() -> None:
    """Every setting says what it changes: a description, or a docstring under the field."""
    from lamina.core.context import MemoryContext

    config = MemoryConfig.model_fields
    context = [f.name for f in dataclasses.fields(MemoryContext)]
    assert len(config) + len(context) <= MAX_SETTINGS, (sorted(config), context)
    for name, field in config.items():
        assert len(field.description or "") >= 40, f"MemoryConfig.{name} is not described"
    docs = context_docstrings()
    for name in context:
        assert len(docs.get(name, "")) >= 40, f"MemoryContext.{name} has no docstring"
