"""Where each of other projects' labelled sets comes from: repository, commit, path, licence; reading a file.

Nothing from these repositories is kept in ours (most of their licences would allow it, some would not, and
none of it is ours to vendor): the loaders rebuild every row from a local copy of the source repository at
the pinned commit, and only our verdicts, keyed by row id, are committed. A local copy is any git directory
holding that commit: a plain ``git clone https://github.com/OWNER/NAME`` or a bare mirror. The copies are
looked for under a root directory (``--source-root``, else ``$REASONGYM_OTHERS_SOURCES``, else
``/work/.mirror``) as ``ROOT/OWNER+NAME/repo``, ``ROOT/OWNER+NAME``, ``ROOT/OWNER/NAME`` or ``ROOT/NAME``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("/work/.mirror")
"""Where this project's machines keep fetched snapshots (``OWNER+NAME/repo``, bare git directories)."""


@dataclass(frozen=True)
class Source:
    """One public repository at one commit, and the licence its files are under."""

    repo: str
    """``OWNER/NAME`` on GitHub."""
    commit: str
    """The full commit the rows were read at; a later commit may hold other rows."""
    licence: str
    """The licence that covers the files read (SPDX name, or what the repository says where it has none)."""


SOURCES: dict[str, Source] = {
    "tinyv": Source("uw-nsl/TinyV", "4a9d2c720c161e2ccc0e492cc59ed5f9c226ec5f", "MIT"),
    "reasoneval": Source(
        "GAIR-NLP/ReasonEval",
        "6c91c7a16e2b0e12ebc89685207cd091fb411478",
        "none stated (no LICENSE file; the README licenses only the models, Apache-2.0)",
    ),
    "mr_gsm8k": Source("dvlab-research/MR-GSM8K", "3f666d60dd5f2fe31d619c528076bac54f4a13b7", "MIT"),
    "math_verify": Source(
        "huggingface/Math-Verify",
        "5d148cfaaf99214c2e4ffb4bc497ab042c592a7a",
        "Apache-2.0 (repository LICENCE; tests/test_all.py carries an MIT header)",
    ),
    "qwen_math": Source(
        "QwenLM/Qwen2.5-Math", "a45202bd16f1ec06f433442dc1152d0074773465", "MIT (evaluation/LICENSE)"
    ),
    "xverify": Source("IAAR-Shanghai/xVerify", "5e3606ac82dfacde5120bbf6db295979bad10e1a", "CC-BY-NC-ND-4.0"),
}
"""The repositories the sets are read from, by the short name the loaders use."""


class SourceMissing(FileNotFoundError):
    """No local copy of a source repository (or of its pinned commit) was found."""


def source_root(given: Path | None = None) -> Path:
    """The directory that holds the local copies: the argument, the environment variable, or the default."""
    if given is not None:
        return given
    from_env = os.environ.get("REASONGYM_OTHERS_SOURCES")
    return Path(from_env) if from_env else DEFAULT_ROOT


def repo_dir(source: Source, root: Path) -> Path:
    """The local git directory of ``source`` under ``root``; SourceMissing names every place looked at."""
    owner, name = source.repo.split("/")
    candidates = [
        root / f"{owner}+{name}" / "repo",
        root / f"{owner}+{name}",
        root / owner / name,
        root / name,
    ]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise SourceMissing(
        f"no local copy of {source.repo} (looked at {looked}); clone https://github.com/{source.repo} "
        f"there and make sure it holds commit {source.commit}"
    )


def read_text(source: Source, path: str, root: Path) -> str:
    """The file ``path`` of ``source`` at its pinned commit, as text."""
    directory = repo_dir(source, root)
    done = subprocess.run(
        ["git", "-C", str(directory), "show", f"{source.commit}:{path}"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if done.returncode != 0:
        raise SourceMissing(
            f"{source.repo} at {directory} has no {path!r} at commit {source.commit[:12]} "
            f"(git said: {done.stderr.strip()[:200]}); fetch that commit, or the file is stored outside git (LFS)"
        )
    return done.stdout
