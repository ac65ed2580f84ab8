"""The benchmarks and studies of reasongym, as a package: scripts import each other by name, with no edit of
``sys.path``. Run each from the repository root as a module: ``python -m benchmarks.bench_envs``.

Its README (benchmarks/README.md) says which script answers which question.
"""
