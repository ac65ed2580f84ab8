"""`reasongym.cli.resume`: what ``--run-dir`` resumes, and the newest run named when it is given a folder of runs."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_folder_of_runs_given_to_run_dir_names_its_newest_run(tmp_path: Path) -> None:
    from reasongym.cli.args import UsageError
    from reasongym.cli.resume import check_resumable
    from reasongym.runs.folder import RunDir

    run = RunDir.create(tmp_path, algo="sft", env="e", seed=0)  # points tmp_path/latest at it
    run.write_run_info({"algo": "sft", "model": "tiny"})
    with pytest.raises(
        UsageError, match=rf"is a folder of runs, not a run folder; .*--run-dir {run.path.resolve()}"
    ):
        check_resumable(tmp_path)
