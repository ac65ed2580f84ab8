"""``python -m benchmarks.study``: the command (`run.main`)."""

from benchmarks.study.run import main

main()
