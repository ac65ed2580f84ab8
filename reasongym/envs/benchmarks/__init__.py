"""Real benchmark datasets as environments: the catalog rows only (plain data, cheap to import).

Each row's ``source`` names a function in this package that returns a lazily loaded
:class:`~reasongym.envs.sources.DatasetSource`; it reads data only when a split is first used, from
``source_kwargs={"data_dir": ...}``, the ``REASONGYM_DATA_DIR`` data root, or the Hugging Face hub, in
that order (see :mod:`reasongym.envs.benchmarks._common`). The default split is ``train`` where the
benchmark has one (training is the main use) and ``test`` for evaluation-only sets. Sizes are those of
the shared data files.
"""

from __future__ import annotations

from reasongym.envs.catalog import CatalogEntry

_PACKAGE = "reasongym.envs.benchmarks"

BENCHMARK_ENVS: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id="reasongym/GSM8K-v0",
        source=f"{_PACKAGE}.gsm8k:source",
        description="GSM8K grade-school math word problems (integer answers)",
        answer_type="math",
        size="train 7473, test 1319",
    ),
    CatalogEntry(
        id="reasongym/MATH-v0",
        source=f"{_PACKAGE}.math_problems:math_source",
        description="MATH competition problems, 7 subjects, levels 1-5 (LaTeX answers)",
        answer_type="math",
        size="train 7500, test 5000",
    ),
    CatalogEntry(
        id="reasongym/MATH500-v0",
        source=f"{_PACKAGE}.math_problems:math500_source",
        description="MATH-500: the 500-problem MATH test subset of PRM800K (evaluation only)",
        answer_type="math",
        size="test 500",
    ),
    CatalogEntry(
        id="reasongym/AIME-v0",
        source=f"{_PACKAGE}.contests:aime_source",
        description="AIME problems: train 1983-2023, test 2024; filter with source_kwargs years=(...)",
        answer_type="integer",
        size="train 919, test 30",
    ),
    CatalogEntry(
        id="reasongym/AIME24-v0",
        source=f"{_PACKAGE}.contests:aime24_source",
        description="AIME 2024 I and II (evaluation only)",
        answer_type="integer",
        size="test 30",
    ),
    CatalogEntry(
        id="reasongym/AMC23-v0",
        source=f"{_PACKAGE}.contests:amc23_source",
        description="AMC 12 2023 problems with numeric answers, options not shown (evaluation only)",
        answer_type="math",
        size="test 40",
    ),
    CatalogEntry(
        id="reasongym/CommonsenseQA-v0",
        source=f"{_PACKAGE}.commonsense:commonsenseqa_source",
        description="CommonsenseQA five-way multiple choice (answer = label A-E)",
        answer_type="choice",
        size="train 9741, validation 1221",
    ),
    CatalogEntry(
        id="reasongym/StrategyQA-v0",
        source=f"{_PACKAGE}.commonsense:strategyqa_source",
        description="StrategyQA yes/no questions needing implicit multi-step reasoning",
        answer_type="yesno",
        size="train 2061, validation 229",
    ),
    CatalogEntry(
        id="reasongym/SVAMP-v0",
        source=f"{_PACKAGE}.svamp:source",
        description="SVAMP one-unknown arithmetic word problems (evaluation only)",
        answer_type="math",
        size="test 1000",
    ),
)
"""The benchmark rows of the built-in environment table."""

__all__ = ["BENCHMARK_ENVS"]
