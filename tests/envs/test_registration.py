"""The registry: id grammar, Gymnasium registration, make, spec, list_envs, and pinned error messages."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import pytest

import reasongym
from reasongym.envs import registration
from reasongym.envs.builtin import BUILTIN, register_builtins
from reasongym.envs.core import ReasoningEnv
from reasongym.errors import ConfigError, UnknownEnvNameError, UnknownEnvVersionError

# A real "module:function" reference, resolved only when the env is made.
SOURCE = "reasongym.envs.procedural.arithmetic:source"


@pytest.fixture
def versions():
    """Two versions of one test id, removed again afterwards."""
    ids = ["regtest/Square-v0", "regtest/Square-v2"]
    for env_id in ids:
        reasongym.register(env_id, SOURCE, description="squares", answer_type="integer", override=True)
    yield ids
    for env_id in ids:
        registration._ENTRIES.pop(env_id, None)
        gymnasium.registry.pop(env_id, None)


def test_import_registers_every_builtin_with_gymnasium() -> None:
    ids = [entry.id for entry in BUILTIN]
    assert ids and len(set(ids)) == len(ids)
    for env_id in ids:
        assert env_id in gymnasium.registry and reasongym.spec(env_id).id == env_id


def test_importing_reasongym_stays_light_and_builds_no_dataset() -> None:
    code = (
        "import sys, reasongym, gymnasium; "
        "heavy = [m for m in ('torch', 'transformers', 'sympy', 'datasets') if m in sys.modules]; "
        "print(heavy, 'reasongym/GSM8K-v0' in gymnasium.registry)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True"


def test_register_builtins_is_idempotent() -> None:
    before = reasongym.list_envs()
    register_builtins()
    assert reasongym.list_envs() == before


def test_register_then_make_through_both_front_doors(versions: list[str]) -> None:
    ours, theirs = reasongym.make(versions[1]), gymnasium.make(versions[1])
    assert isinstance(ours.unwrapped, ReasoningEnv) and isinstance(theirs.unwrapped, ReasoningEnv)
    assert ours.reset(seed=3)[0] == theirs.reset(seed=3)[0]


def test_list_envs_rows_are_sorted_and_describe_each_env(versions: list[str]) -> None:
    rows = reasongym.list_envs()
    assert [row.id for row in rows] == sorted(row.id for row in rows)
    row = next(row for row in rows if row.id == versions[0])
    assert (row.description, row.answer_type, row.size) == ("squares", "integer", "procedural")


def test_make_without_version_takes_the_latest(versions: list[str]) -> None:
    assert reasongym.spec("regtest/Square").id == "regtest/Square-v2"
    assert reasongym.make("regtest/Square").unwrapped.spec.id == "regtest/Square-v2"


def test_make_passes_options_and_merges_source_kwargs(versions: list[str]) -> None:
    reasongym.register(
        "regtest/Square-v2",
        SOURCE,
        description="squares",
        answer_type="integer",
        source_kwargs={"seed": 1},
        env_kwargs={"format_reward": 0.1},
        override=True,
    )
    env = reasongym.make("regtest/Square-v2", correct_reward=3.0, source_kwargs={})
    assert env.unwrapped.source.seed == 1 and env.unwrapped.config.format_reward == 0.1
    assert env.unwrapped.config.correct_reward == 3.0
    assert reasongym.make("regtest/Square-v2", source_kwargs={"seed": 5}).unwrapped.source.seed == 5


def test_reregistering_needs_override(versions: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register(versions[0], SOURCE, description="again", answer_type="integer")
    assert str(caught.value) == (
        "environment id 'regtest/Square-v0' is already registered; pass override=True to replace it"
    )


# --- pinned error messages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "message"),
    [
        (
            "reasongym/gsm8k-v0",
            "no environment named 'reasongym/gsm8k-v0'; did you mean 'reasongym/GSM8K-v0'?",
        ),
        ("reasongym/GSM8k-v0", "did you mean 'reasongym/GSM8K-v0'?"),
        ("GSM8K-v0", "did you mean 'reasongym/GSM8K-v0'?"),
        ("reasongym/Arithmatic-v0", "did you mean 'reasongym/Arithmetic-v0'?"),
        (
            "nothing/LikeThis-v0",
            "no environment named 'nothing/LikeThis-v0' (`reasongym list` or reasongym.list_envs()",
        ),
    ],
)
def test_unknown_name_suggests_the_nearest_id(env_id: str, message: str) -> None:
    with pytest.raises(UnknownEnvNameError) as caught:
        reasongym.make(env_id)
    assert message in str(caught.value)


def test_unknown_version_lists_the_versions_that_exist(versions: list[str]) -> None:
    with pytest.raises(UnknownEnvVersionError) as caught:
        reasongym.make("regtest/Square-v1")
    assert str(caught.value) == (
        "environment 'regtest/Square' has no version v1; registered versions: regtest/Square-v0, regtest/Square-v2"
    )
    with pytest.raises(UnknownEnvVersionError, match="registered versions: reasongym/GSM8K-v0"):
        reasongym.spec("reasongym/GSM8K-v9")


@pytest.mark.parametrize(
    "bad_id", ["Square-v0", "regtest/Square", "regtest/Square-v", "regtest/Sq uare-v0", "a/b/c-v0"]
)
def test_malformed_ids_are_refused_at_registration(bad_id: str) -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register(bad_id, SOURCE, description="x", answer_type="integer")
    assert str(caught.value).startswith(
        f"malformed environment id {bad_id!r}: ids look like 'namespace/Name-vN'"
    )


def test_unknown_answer_type_suggests_the_nearest() -> None:
    with pytest.raises(ConfigError) as caught:
        reasongym.register("regtest/Bad-v0", SOURCE, description="x", answer_type="integr")
    assert "answer_type 'integr' is not one of" in str(caught.value)
    assert "did you mean 'integer'?" in str(caught.value)


def test_an_id_near_no_environment_gets_no_far_suggestion() -> None:
    import reasongym
    from reasongym.errors import UnknownEnvNameError

    with pytest.raises(UnknownEnvNameError, match=r"no environment named 'composite-v0' \(`reasongym list`"):
        reasongym.make("composite-v0")
    with pytest.raises(UnknownEnvNameError, match=r"did you mean 'reasongym/Arithmetic-v0'\?"):
        reasongym.make("reasongym/Arithmetc-v0")
