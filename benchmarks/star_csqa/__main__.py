"""``python -m benchmarks.star_csqa``: the command (`run.main`)."""

from benchmarks.star_csqa.run import main

main()
