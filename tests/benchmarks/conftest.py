"""The benchmark script a test module names in its ``SCRIPT``, loaded as a module (benchmarks/ is no package)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest


@pytest.fixture(scope="module")
def bench(request: pytest.FixtureRequest) -> Any:
    script = request.module.SCRIPT
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[script.stem] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
