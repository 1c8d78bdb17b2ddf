"""MemoryConfig: defaults, validation, and the env / TOML edge with explicit values winning."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamina import MemoryConfig
from lamina.config import RETIRED
from lamina.core.context import RETIRED as CONTEXT_RETIRED
from lamina.errors import InvalidInputError, StoreConfigurationError


def test_defaults_are_offline_and_under_the_data_dir(tmp_path: Path) -> None:
    config = MemoryConfig(data_dir=tmp_path)
    assert config.chroma_mode == "persistent"
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
        {"chroma_mode": "cloud"},
        {"chroma_url": "http://chroma:70000"},
        {"chroma_url": "chroma:8000"},
        {"chroma_url": "ftp://chroma:8000"},
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
        "LAMINA_CHROMA_MODE": "http",
        "LAMINA_CHROMA_URL": "https://chroma.internal:9000",
        "OPENAI_API_KEY": "sk-abc",
        "OPENAI_BASE_URL": "http://llm:8080/v1",
        "OPENAI_MODEL": "qwen2.5",
        "LAMINA_MAX_TOKENS": "none",
        "LAMINA_TRIGGER_POLICY": "session",
        "LAMINA_TIMEZONE": "Europe/Berlin",
        "LAMINA_LOCAL_THREADS": "",
    }
    config = MemoryConfig.from_env(env)
    assert config.data_dir == Path("/srv/mem")
    assert config.chroma_mode == "http"
    assert config.chroma_server == ("chroma.internal", 9000, True)
    assert MemoryConfig(chroma_url="http://10.0.0.2").chroma_server == ("10.0.0.2", 8000, False)
    assert config.openai_api_key is not None
    assert config.openai_api_key.get_secret_value() == "sk-abc"
    assert "sk-abc" not in repr(config)
    assert (config.openai_base_url, config.model) == ("http://llm:8080/v1", "qwen2.5")
    assert config.max_tokens is None and config.local_threads is None
    assert config.context == {"trigger_policy": "session", "timezone": "Europe/Berlin"}
    assert config.uses_endpoint


def test_lamina_variables_beat_the_standard_openai_ones() -> None:
    env = {"OPENAI_MODEL": "a", "LAMINA_MODEL": "b"}
    assert MemoryConfig.from_env(env).model == "b"


def test_explicit_overrides_beat_env_and_file(tmp_path: Path) -> None:
    path = tmp_path / "lamina.toml"
    path.write_text(
        'model = "from-file"\ntimeout = 12.5\nlocal_ctx = 4096\n'
        '[context]\ntrigger_policy = "eager"\ncontext_tokens = 900\n'
    )
    env = {"LAMINA_CONFIG": str(path), "LAMINA_MODEL": "from-env"}
    config = MemoryConfig.from_env(env)
    assert (config.model, config.timeout, config.local_ctx) == ("from-env", 12.5, 4096)
    assert config.context == {"trigger_policy": "eager", "context_tokens": 900}
    explicit = MemoryConfig.from_env(
        env, model="explicit", local_ctx=2048, context={"trigger_policy": "session"}
    )
    assert (explicit.model, explicit.local_ctx) == ("explicit", 2048)
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
    with pytest.raises(InvalidInputError, match="a LAMINA_ variable"):
        MemoryConfig.from_env({f"LAMINA_{name.upper()}": "1"})


def test_env_is_not_read_without_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live")
    monkeypatch.setenv("LAMINA_CHROMA_MODE", "http")
    config = MemoryConfig()
    assert config.openai_api_key is None and config.chroma_mode == "persistent"
    assert MemoryConfig.from_env().chroma_mode == "http"  # None reads os.environ


def test_toml_with_a_lamina_table_and_explicit_path(tmp_path: Path) -> None:
    path = tmp_path / "pyproject-like.toml"
    path.write_text('[lamina]\nchroma_mode = "ephemeral"\n')
    assert MemoryConfig.from_env({}, config_file=path).chroma_mode == "ephemeral"
    assert MemoryConfig.from_toml(path, chroma_mode="http").chroma_mode == "http"


def test_bad_env_values_and_files_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="chroma_url"):
        MemoryConfig.from_env({"LAMINA_CHROMA_URL": "http://chroma:eighty"})
    with pytest.raises(StoreConfigurationError, match="does not exist"):
        MemoryConfig.from_env({"LAMINA_CONFIG": str(tmp_path / "missing.toml")})
    broken = tmp_path / "broken.toml"
    broken.write_text("model = ")
    with pytest.raises(StoreConfigurationError, match="not valid TOML"):
        MemoryConfig.from_toml(broken)


# ------------------------------------------------ the small-model profile
def test_the_offline_model_gets_the_small_model_profile_and_an_endpoint_does_not() -> None:
    from lamina.core.context import SMALL_MODEL_PROFILE

    local = MemoryConfig(chroma_mode="ephemeral").memory_context("ns")
    assert {k: getattr(local, k) for k in SMALL_MODEL_PROFILE} == dict(SMALL_MODEL_PROFILE)
    assert local.small_model is True
    remote = MemoryConfig(chroma_mode="ephemeral", openai_base_url="http://h:1/v1")
    assert remote.memory_context("ns").small_model is False  # no English rules for it
    # a configured setting wins over the profile, and the caller may say which model runs
    mixed = MemoryConfig(chroma_mode="ephemeral", context={"small_model": False})
    assert mixed.memory_context("ns").small_model is False
    assert remote.memory_context("ns", small_model=True).small_model is True
    offline = MemoryConfig(chroma_mode="ephemeral")
    assert offline.memory_context("ns", small_model=False).small_model is False


def test_a_model_given_to_the_facade_gets_the_librarys_defaults() -> None:
    from lamina import Memory
    from lamina.testing import FakeEmbeddings, SchemaChatModel

    config = MemoryConfig(chroma_mode="ephemeral")
    with Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel()) as m:
        assert m._models.small_model is False
        _, ctx = m._answer_request("what?", "ns", [], None)
        assert ctx.small_model is False
    with Memory(config=config, embeddings=FakeEmbeddings()) as offline:
        assert offline._models.small_model is True  # the model is not loaded to know it
