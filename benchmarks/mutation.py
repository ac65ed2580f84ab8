"""Mutation testing of the core on demand (not in CI): how many planted bugs do the tests catch?

Run alone from the repository root (it takes hours on two cores; run it in the background)::

    pip install -e ".[mutation]"            # mutmut
    OMP_NUM_THREADS=1 python -m benchmarks.mutation            # every configured module
    OMP_NUM_THREADS=1 python -m benchmarks.mutation --survivors # only list the survivors of the last run

mutmut's settings live in ``pyproject.toml`` (``[tool.mutmut]``): the modules mutated (math grading,
equivalence and numeric comparison, answer extraction, the estimators, the GRPO and DAPO losses,
advantages, STaR and checkpoints) and the test files that may kill their mutants. mutmut copies the
package into ``mutants/``, plants one small change per mutant (an operator, a constant, a string, an
argument dropped), and runs the tests that cover the changed function; a mutant is *killed* when one of
them fails, *survived* when all pass. One process at a time (``--max-children 1``). Results are cached in
``mutants/``: a second run only checks mutants of changed functions; delete the folder to start over.

``PYTHONPATH`` is dropped for the run: mutmut's copy in ``mutants/`` must be what ``import reasongym``
finds. Mutants of code that runs in the sympy worker process are not planted (``# pragma: no mutate``):
the worker is a fresh interpreter mutmut cannot see into.

Ends with ONE JSON line: ``killed``, ``survived``, ``timeout``, ``no_tests``, ``not_checked``, ``total`` and
``score``, the share of checked mutants that were killed (timeouts count as killed). Above it: the
survivors and each module's counts and score. Measured figures and the equivalent survivors are in
``benchmarks/README.md`` ("Mutation testing"). Judge each survivor
(``mutmut show NAME`` prints the change): an equivalent mutant (same behaviour) is fine, a
real one wants a test that pins the value it changes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATUSES = ("killed", "survived", "timeout", "no tests", "not checked")


def _mutmut(*args: str, capture: bool = False) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    executable = shutil.which("mutmut") or str(Path(sys.executable).with_name("mutmut"))
    return subprocess.run(
        [executable, *args], cwd=ROOT, env=env, text=True, capture_output=capture, check=False
    )


def statuses() -> dict[str, str]:
    """Every mutant of the last run and its status (killed, survived, timeout, no tests, not checked...)."""
    listing = _mutmut("results", "--all", "true", capture=True).stdout
    pairs = (line.strip().rsplit(": ", 1) for line in listing.splitlines() if ": " in line)
    return {name: status for name, status in pairs}


def per_module(by_mutant: dict[str, str]) -> dict[str, dict[str, int]]:
    """Counts of each status per mutated module (``reasongym.agents.grpo.x_name__mutmut_3`` -> grpo)."""
    tally: dict[str, dict[str, int]] = {}
    for name, status in by_mutant.items():
        module = re.sub(r"\.x[_ǁ].*$", "", name).rsplit(".", 1)[-1]
        counts = tally.setdefault(module, {})
        counts[status] = counts.get(status, 0) + 1
    return tally


def _score(counts: dict[str, int]) -> float | None:
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    checked = killed + counts.get("survived", 0)
    return round(killed / checked, 4) if checked else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--survivors", action="store_true", help="only report the last run's results")
    parser.add_argument("mutants", nargs="*", help="mutant name patterns (default: all configured modules)")
    args = parser.parse_args()
    try:
        import mutmut  # noqa: F401
    except ModuleNotFoundError:
        print(json.dumps({"skipped": "mutmut is not installed: pip install -e '.[mutation]'"}))
        return
    started = time.perf_counter()
    if not args.survivors:
        _mutmut("run", "--max-children", "1", *args.mutants)
    by_mutant = statuses()
    names = sorted(name for name, status in by_mutant.items() if status == "survived")
    print("\n".join(["survivors (mutmut show NAME):", *names]))
    modules = per_module(by_mutant)
    for module, counts in sorted(modules.items()):
        print(f"{module}: {counts} score={_score(counts)}")
    total: dict[str, int] = {}
    for counts in modules.values():
        for status, count in counts.items():
            total[status] = total.get(status, 0) + count
    summary = {key.replace(" ", "_"): total.get(key, 0) for key in STATUSES}
    summary["total"] = sum(total.values())
    summary["score"] = _score(total)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
