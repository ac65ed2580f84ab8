"""``python -m benchmarks.distill``: the command (`run.main`)."""

from benchmarks.distill.run import main

main()
