"""Fresh greedy chain-of-thought completions of SmolLM2-135M-Instruct on real benchmark rows, for hand labelling.

Run alone: ``OMP_NUM_THREADS=1 python -m benchmarks.make_smollm2_cot_completions OUT.jsonl [--csqa A:B]
[--strategyqa A:B] [--gsm8k A:B] [--svamp A:B] [--math500 A:B] [--aime A:B] [--countdown A:B]
[--max-new-tokens N]`` (needs ``$REASONGYM_SMOLLM2_GGUF`` and ``$REASONGYM_DATA_DIR``). Each ``A:B`` is a
half-open range of rows of that dataset's evaluation file (for ``--countdown``, of seeds of
``reasongym/Countdown-v0``); a dataset without a range is skipped.

The defaults (CommonsenseQA dev rows 300-324, StrategyQA dev rows 100-124, 200 new tokens) wrote the
``smollm2`` rows of ``independent_set_35.jsonl`` (the run was stopped after 39 completions, about 20 s each
on a shared CPU); ``independent_set_35d.jsonl`` used CommonsenseQA 600-619 and StrategyQA 180-195;
``independent_set_50.jsonl`` used ``--csqa 900:912 --strategyqa 150:162 --gsm8k 400:414 --svamp 300:310
--math500 300:308 --aime 100:103 --countdown 0:6 --max-new-tokens 300``; ``independent_set_50f.jsonl`` used
``--csqa 1000:1010 --strategyqa 210:222 --gsm8k 1000:1010 --svamp 700:708 --math500 440:446 --aime 600:603
--countdown 500:506 --max-new-tokens 300``. One line per completion: kind,
gold, choices, dataset row id, the prompt and the completion; every row was then labelled by hand.

Prompts: CommonsenseQA lists the options and asks for the letter; StrategyQA asks for yes or no; the math
rows (GSM8K, SVAMP, MATH-500, AIME) end with the math environments' instruction ("Reason step by step, and
put your final answer within \\boxed{}."); Countdown uses the environment's own prompt.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MATH_INSTRUCTION = "Reason step by step, and put your final answer within \\boxed{}."
MATH_FILES = {  # option name -> (data file, verifier kind, label in the records)
    "gsm8k": ("gsm8k/test.jsonl", "math", "gsm8k test"),
    "svamp": ("svamp/test.jsonl", "math", "svamp test"),
    "math500": ("math500/test.jsonl", "math", "math500 test"),
    "aime": ("aime_1983_2023/train.jsonl", "integer", "aime 1983-2023"),
}


def row_range(text: str) -> range:
    """``"A:B"`` as ``range(A, B)``."""
    start, _, stop = text.partition(":")
    try:
        return range(int(start), int(stop))
    except ValueError:
        raise argparse.ArgumentTypeError(f"row range {text!r} is not A:B with integers A < B") from None


def _rows(path: Path, wanted: range) -> list[dict]:
    if not wanted:
        return []  # a dataset that was not chosen need not exist
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for index, line in enumerate(handle) if index in wanted]


def _choice_prompts(data_dir: Path, args: argparse.Namespace) -> list[tuple[dict, str]]:
    out = []
    for row in _rows(data_dir / "commonsenseqa" / "dev.jsonl", args.csqa or range(0)):
        options = "\n".join(f"({c['label']}) {c['text']}" for c in row["choices"])
        question = f"{row['question']}\n{options}\nThink step by step, then give the letter of the answer."
        record = {"kind": "choice", "gold": row["answer"], "choices": row["choices"], "row": row["id"]}
        out.append(({**record, "src": "csqa dev"}, question))
    for row in _rows(data_dir / "strategyqa" / "dev.jsonl", args.strategyqa or range(0)):
        question = f"{row['question']}\nThink step by step, then answer yes or no."
        out.append(
            ({"kind": "yesno", "gold": row["answer"], "row": row["id"], "src": "strategyqa dev"}, question)
        )
    return out


def _math_prompts(data_dir: Path, args: argparse.Namespace) -> list[tuple[dict, str]]:
    out = []
    for name, (file, kind, label) in MATH_FILES.items():
        for row in _rows(data_dir / file, getattr(args, name) or range(0)):
            record = {"kind": kind, "gold": row["answer"], "row": row["id"], "src": label}
            out.append((record, f"{row['question']}\n\n{MATH_INSTRUCTION}"))
    return out


def _countdown_prompts(seeds: range) -> list[tuple[dict, str]]:
    import reasongym

    env = reasongym.make("reasongym/Countdown-v0")
    out = []
    for seed in seeds:
        question, info = env.reset(seed=seed)
        meta = info["metadata"]
        gold = f"target={meta['target']}; numbers={','.join(str(n) for n in meta['numbers'])}"
        out.append(
            ({"kind": "countdown", "gold": gold, "row": info["problem_id"], "src": "countdown"}, question)
        )
    return out


def prompts(data_dir: Path, args: argparse.Namespace) -> list[tuple[dict, str]]:
    """(record, prompt) per chosen row, dataset by dataset."""
    return [
        *_choice_prompts(data_dir, args),
        *_math_prompts(data_dir, args),
        *_countdown_prompts(args.countdown or range(0)),
    ]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The output path, the row range of each dataset and the token budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where the completions go (JSONL)")
    parser.add_argument("--csqa", type=row_range, default=None, help="CommonsenseQA dev rows A:B")
    parser.add_argument("--strategyqa", type=row_range, default=None, help="StrategyQA dev rows A:B")
    for name, (file, _, _) in MATH_FILES.items():
        parser.add_argument(f"--{name}", type=row_range, default=None, help=f"rows A:B of {file}")
    parser.add_argument("--countdown", type=row_range, default=None, help="Countdown-v0 seeds A:B")
    parser.add_argument("--max-new-tokens", type=int, default=200, help="new tokens per completion")
    args = parser.parse_args(argv)
    chosen = ("csqa", "strategyqa", "countdown", *MATH_FILES)
    if all(getattr(args, name) is None for name in chosen):
        args.csqa, args.strategyqa = range(300, 325), range(100, 125)  # the set C run
    return args


def main(argv: list[str] | None = None) -> None:
    """Generate greedily, one prompt at a time, appending each completion as soon as it is written."""
    import torch

    from reasongym.policy.loading import load_policy

    args = parse_args(argv)
    torch.set_num_threads(1)
    model, tokenizer = load_policy(os.environ["REASONGYM_SMOLLM2_GGUF"])
    with args.out.open("w", encoding="utf-8") as out:
        for record, question in prompts(Path(os.environ["REASONGYM_DATA_DIR"]), args):
            chat = [{"role": "user", "content": question}]
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            ids = tokenizer(text, return_tensors="pt")
            with torch.no_grad():
                generated = model.generate(
                    **ids,
                    max_new_tokens=args.max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )
            completion = tokenizer.decode(generated[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
            out.write(json.dumps({**record, "question": question, "completion": completion}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
