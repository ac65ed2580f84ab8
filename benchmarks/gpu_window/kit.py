"""The device kit: what a GPU window needs that its machine lacks, in parts that each command can carry.

The GPU machines have torch, transformers, peft and accelerate but not reasongym's other dependencies
(gymnasium, tyro, gguf; datasets and TRL for the TRL section), no benchmark data, no model weights and no
network, and each command carries at most 64 MiB (the tracked checkout included). ``prepare`` runs where pip
reaches PyPI and lays everything out under ``.kit/`` (ignored by git), one folder per command:

- ``c1``: the wheels (`WHEELS`, for the image's Python 3.12 on x86-64), the data subsets (`DATA_FILES`) and
  the first part of the model's GGUF file;
- ``c2``, ...: the GGUF's other parts, each at most `PART_MIB` MiB and small enough that the command's carried
  folder plus the tracked checkout stays under `COMMAND_LIMIT_MIB`;
- ``kit.json`` in each folder: every file's size and sha256, the whole GGUF's sha256, and the plan.

``install .kit/cN`` runs on the GPU machine, once per command, in order: it checks every file of the folder
against its sha256, installs the wheels into ``ROOT/site`` (pip, no index, no dependencies), copies the data
to ``ROOT/data`` and the parts to ``ROOT/parts``; once all parts are there it joins them, checks the whole
file's sha256 and writes ``ROOT/model/<name>.gguf``. It writes ``ROOT/env.sh`` (PYTHONPATH, REASONGYM_DATA_DIR,
REASONGYM_KIT_MODEL) for later commands to source. ROOT is ``/tmp/reasongym-kit`` unless ``--root`` says
otherwise: outside the checkout, it lasts as long as the machine stays warm (30 s after a command ends).

Standard library only: it runs before anything is installed. Run (from the repository root)::

    python -m benchmarks.gpu_window.kit prepare --gguf PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf
    python3 -m benchmarks.gpu_window.kit install .kit/c1      # on the GPU machine, first command
    python3 -m benchmarks.gpu_window.kit install .kit/c2      # second command: the model is assembled
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

MIB = 2**20
COMMAND_LIMIT_MIB = 64
"""What one device command carries at most: tracked files, untracked files git does not ignore, carried paths."""
MARGIN_MIB = 2
"""Kept free under the limit for files written between planning and the command (logs, a results file)."""
PART_MIB = 48
"""Largest GGUF part (the issue: parts of at most about 50 MiB)."""
WHEELS = {
    "gymnasium": "1.4.0",
    "farama-notifications": "0.0.6",
    "tyro": "1.0.17",
    "docstring-parser": "0.18.0",
    "typeguard": "4.6.1",
    "gguf": "0.19.0",
    "datasets": "5.2.0",
    "dill": "0.4.1",
    "multiprocess": "0.70.19",
    "trl": "1.16.0",
}
"""The packages reasongym and the window's sections need that the GPU image lacks (its list: the device
notes, "Python packages already there"), pinned to the versions our CI runs. torch, transformers, peft,
accelerate, numpy, sympy, pyyaml, tqdm, matplotlib, pyarrow, pandas, xxhash, fsspec, requests and
huggingface-hub are on the image."""
WHEEL_BUDGET_MIB = 4
"""The wheels together at most (measured: 2.6 MiB); `plan` assumes this much before they are fetched."""
DATA_FILES = ("svamp/test.jsonl", "gsm8k/test.jsonl", "commonsenseqa/dev.jsonl")
"""The data subsets, relative to a data root (``REASONGYM_DATA_DIR``): held-out sets only; Arithmetic-v0,
the window's training task, is generated."""
PIP_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
DEFAULT_ROOT = Path("/tmp/reasongym-kit")


def tracked_bytes(repo: Path) -> int:
    """Bytes of the files git tracks in ``repo`` (they travel with every command)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    return sum((repo / name).stat().st_size for name in listed.decode().split("\0") if name)


def plan(first_bytes: int, gguf_bytes: int, tracked: int) -> list[list[int]]:
    """The GGUF's part sizes per command: command 1 also carries ``first_bytes`` (wheels and data), every
    command the ``tracked`` checkout; each part at most `PART_MIB`, each command under the limit.

    Raises:
        SystemExit: The checkout and the first folder leave no room for a part.
    """
    budget = (COMMAND_LIMIT_MIB - MARGIN_MIB) * MIB - tracked
    if budget - first_bytes < MIB:
        raise SystemExit(
            f"the checkout ({tracked / MIB:.1f} MiB) and the wheels and data ({first_bytes / MIB:.1f} MiB) "
            f"leave no room under {COMMAND_LIMIT_MIB - MARGIN_MIB} MiB for a model part"
        )
    commands: list[list[int]] = []
    left, room = gguf_bytes, budget - first_bytes
    while left > 0:
        part = min(left, PART_MIB * MIB, room)
        commands.append([part])
        left, room = left - part, budget
    return commands


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheels(folder: Path) -> None:
    """`WHEELS` for CPython 3.12 on x86-64 Linux into ``folder``, one ``pip download --no-deps`` each."""
    folder.mkdir(parents=True, exist_ok=True)
    platforms = [arg for platform in PIP_PLATFORMS for arg in ("--platform", platform)]
    for name, version in WHEELS.items():
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(folder)]
        subprocess.run([*command, f"{name}=={version}"], check=True)
    total = sum(p.stat().st_size for p in folder.glob("*.whl"))
    if total > WHEEL_BUDGET_MIB * MIB:
        raise SystemExit(f"the wheels take {total / MIB:.1f} MiB, over WHEEL_BUDGET_MIB={WHEEL_BUDGET_MIB}")


def copy_data(data_root: Path, folder: Path) -> None:
    """`DATA_FILES` from ``data_root`` into ``folder/data`` (the same layout)."""
    for name in DATA_FILES:
        source = data_root / name
        if not source.is_file():
            raise SystemExit(f"data file {source} not found; set --data-dir to a data root holding {name}")
        (folder / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / "data" / name)


def prepare(args: argparse.Namespace) -> dict:
    """Lay the kit out under ``args.out``: c1 (wheels, data, part 1), c2... (parts); returns the plan."""
    out, gguf = Path(args.out), Path(args.gguf)
    shutil.rmtree(out, ignore_errors=True)
    first = out / "c1"
    if not args.no_wheels:
        fetch_wheels(first / "wheels")
    if args.data_dir:
        copy_data(Path(args.data_dir), first)
    first_bytes = sum(p.stat().st_size for p in first.rglob("*") if p.is_file()) if first.exists() else 0
    tracked = args.tracked_bytes if args.tracked_bytes is not None else tracked_bytes(Path.cwd())
    sizes = [size for command in plan(first_bytes, gguf.stat().st_size, tracked) for size in command]
    parts = []
    with gguf.open("rb") as stream:
        for index, size in enumerate(sizes, start=1):
            folder = out / f"c{index}" / "parts"
            folder.mkdir(parents=True, exist_ok=True)
            part = folder / f"{gguf.name}.part{index}"
            part.write_bytes(stream.read(size))
            parts.append(part.name)
    manifest = {"gguf": gguf.name, "gguf_sha256": sha256(gguf), "parts": parts, "commands": len(sizes)}
    for command in sorted(out.glob("c*")):
        files = {str(p.relative_to(command)): p for p in sorted(command.rglob("*")) if p.is_file()}
        record = {name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for name, p in files.items()}
        carried = sum(item["bytes"] for item in record.values())
        (command / "kit.json").write_text(json.dumps({**manifest, "files": record}, indent=1) + "\n")
        manifest.setdefault("carried_mib", {})[command.name] = round(carried / MIB, 2)
    manifest["tracked_mib"] = round(tracked / MIB, 2)
    return manifest


def install(args: argparse.Namespace) -> dict:
    """Check one command's folder, install what it holds under ``args.root``; join the model when complete."""
    folder, root = Path(args.folder), Path(args.root)
    kit = json.loads((folder / "kit.json").read_text())
    for name, item in kit["files"].items():
        if sha256(folder / name) != item["sha256"]:
            raise SystemExit(f"{folder / name}: sha256 differs from kit.json; prepare the kit again")
    wheels = sorted((folder / "wheels").glob("*.whl"))
    if wheels:
        command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
        command += ["--no-cache-dir", "--upgrade", "--target", str(root / "site"), *map(str, wheels)]
        subprocess.run(command, check=True)
    if (folder / "data").is_dir():
        shutil.copytree(folder / "data", root / "data", dirs_exist_ok=True)
    (root / "parts").mkdir(parents=True, exist_ok=True)
    for part in sorted((folder / "parts").glob("*.part*")):
        shutil.copyfile(part, root / "parts" / part.name)
    model = root / "model" / kit["gguf"]
    have = [root / "parts" / name for name in kit["parts"]]
    if not model.exists() and all(p.exists() for p in have):
        model.parent.mkdir(parents=True, exist_ok=True)
        with model.open("wb") as joined:
            for part in have:
                joined.write(part.read_bytes())
        if sha256(model) != kit["gguf_sha256"]:
            model.unlink()
            raise SystemExit(f"the joined {kit['gguf']} does not match its sha256; prepare the kit again")
        for part in have:
            part.unlink()
    lines = [f"export PYTHONPATH={root / 'site'}:{Path.cwd()}${{PYTHONPATH:+:$PYTHONPATH}}"]
    lines.append(f"export REASONGYM_DATA_DIR={root / 'data'} HF_HUB_OFFLINE=1")
    if model.exists():
        lines.append(f"export REASONGYM_KIT_MODEL={model}")
    (root / "env.sh").write_text("\n".join(lines) + "\n")
    missing = [] if model.exists() else [p.name for p in have if not p.exists()]
    return {"root": str(root), "model": str(model) if model.exists() else None, "parts_missing": missing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("prepare", help="on a machine with network: lay the kit out under --out")
    make.add_argument(
        "--gguf", default=os.environ.get("REASONGYM_SMOLLM2_GGUF"), help="the model's GGUF file"
    )
    make.add_argument("--data-dir", default=os.environ.get("REASONGYM_DATA_DIR"), help="a data root")
    make.add_argument("--out", default=".kit")
    make.add_argument("--no-wheels", action="store_true", help="skip the wheels (tests: no network)")
    make.add_argument("--tracked-bytes", type=int, default=None, help="the checkout's size (default: git's)")
    put = verbs.add_parser("install", help="on the GPU machine: check and install one command's folder")
    put.add_argument("folder", help=".kit/c1, then .kit/c2, ...")
    put.add_argument("--root", default=str(DEFAULT_ROOT))
    args = parser.parse_args()
    if args.verb == "prepare" and not args.gguf:
        raise SystemExit("--gguf is required (or REASONGYM_SMOLLM2_GGUF): the model file to carry in parts")
    print(json.dumps(prepare(args) if args.verb == "prepare" else install(args)))


if __name__ == "__main__":
    main()
