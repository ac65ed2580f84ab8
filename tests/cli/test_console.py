"""`reasongym.cli.console`: a warning during a progress bar gets a line of its own, without the source echo."""

from __future__ import annotations

import io
import warnings


def test_a_warning_during_a_progress_bar_gets_its_own_line_without_the_source_echo() -> None:
    from tqdm.auto import tqdm

    from reasongym.cli.console import PACKAGE, warnings_on_their_own_line

    original = warnings.formatwarning
    ours = str(PACKAGE / "agents" / "runtime" / "session.py")
    with warnings_on_their_own_line():
        bar = tqdm(total=10, file=io.StringIO(), desc="grpo")
        bar.update(3)
        during = warnings.formatwarning("most groups had no reward variance", UserWarning, ours, 300)
        library = warnings.formatwarning(
            "old API", DeprecationWarning, "/x/site-packages/torch/io.py", 12, "src"
        )
        bar.close()
        after = warnings.formatwarning("most groups had no reward variance", UserWarning, ours, 300)
    # a line of its own under the bar, no "FILE:LINE: UserWarning:", no source line
    assert during == "\nreasongym: warning: most groups had no reward variance\n"
    assert library == "\nreasongym: warning: old API (DeprecationWarning, io.py:12)\n"
    assert after == "reasongym: warning: most groups had no reward variance\n"  # no bar: no blank line
    assert warnings.formatwarning is original  # the command's format is the command's only
