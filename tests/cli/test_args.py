"""`reasongym.cli.args`: the YAML config files a user passes with ``--config``."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasongym.errors import ConfigError


def test_yaml_reads_exponent_floats_as_numbers(tmp_path: Path) -> None:
    from reasongym.cli.args import read_config_file

    (tmp_path / "c.yaml").write_text("lr: 1e-4\nb: -2E+3\nc: .5e1\nd: 1e4x\n")
    assert read_config_file(tmp_path / "c.yaml") == {"lr": 1e-4, "b": -2000.0, "c": 5.0, "d": "1e4x"}


def test_yaml_refuses_duplicate_keys(tmp_path: Path) -> None:
    from reasongym.cli.args import read_config_file

    (tmp_path / "c.yaml").write_text("lr: 1e-4\nrun:\n  a: 1\n  a: 2\n")
    with pytest.raises(ConfigError, match=r"c.yaml' could not be parsed: line 4: duplicate key 'a'"):
        read_config_file(tmp_path / "c.yaml")
