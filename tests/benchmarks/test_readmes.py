"""The benchmarks' READMEs (the index and each study's): every result file and every link they cite exists,
so that moving a study's results cannot leave its README pointing at nothing."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
READMES = sorted(p for p in (REPO / "benchmarks").rglob("README.md") if "results" not in p.parts)
CITED = re.compile(r"(?<![\w/.-])(benchmarks/[\w./-]+|results/[\w./-]+)")
PLACEHOLDERS = ("SET", "ARM-sSEED", "HardVerify-Math")
"""Names in a cited path that stand for a file a command writes or a source holds, not one of ours."""


def _missing(readme: Path) -> list[str]:
    text, missing = readme.read_text(encoding="utf-8"), []
    for match in CITED.finditer(text):
        path = match.group(1).rstrip(".,")
        if any(name in path for name in PLACEHOLDERS) or text[match.end() : match.end() + 1] == "{":
            continue
        base = REPO if path.startswith("benchmarks/") else readme.parent
        if not (base / path).exists():
            missing.append(path)
    for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not link.startswith("http") and not (readme.parent / link).exists():
            missing.append(link)
    return sorted(set(missing))


def test_every_result_and_link_a_benchmark_readme_cites_exists() -> None:
    assert len(READMES) >= 5  # the index and the studies'
    assert {str(r.relative_to(REPO)): _missing(r) for r in READMES if _missing(r)} == {}


def test_the_check_finds_a_missing_file(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("The table (`results/none/table.md`) and [the plot](results/none.png).\n")
    assert _missing(readme) == ["results/none.png", "results/none/table.md"]
