"""``python -m benchmarks.real_learning``: the command (`run.main`)."""

from benchmarks.real_learning.run import main

main()
