"""Fresh greedy chain-of-thought completions of SmolLM2-135M-Instruct on CommonsenseQA and StrategyQA dev rows.

Run alone: ``OMP_NUM_THREADS=1 python benchmarks/make_smollm2_cot_completions.py OUT.jsonl``
(needs ``$REASONGYM_SMOLLM2_GGUF`` and ``$REASONGYM_DATA_DIR``). It wrote the ``smollm2`` rows of
``independent_set_35.jsonl`` (CommonsenseQA dev rows 300-324, StrategyQA dev rows 100-124; the run was
stopped after 39 completions, about 20 s each on a shared CPU), which were then labelled by hand. One line
per completion: kind, gold, choices, dataset row id, the prompt and the completion.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CSQA_ROWS = range(300, 325)
STRATEGYQA_ROWS = range(100, 125)
MAX_NEW_TOKENS = 200


def _rows(path: Path, wanted: range) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for index, line in enumerate(handle) if index in wanted]


def prompts(data_dir: Path) -> list[tuple[dict, str]]:
    """(record, prompt) per dev row: the options listed for CommonsenseQA, a yes/no request for StrategyQA."""
    out = []
    for row in _rows(data_dir / "commonsenseqa" / "dev.jsonl", CSQA_ROWS):
        options = "\n".join(f"({c['label']}) {c['text']}" for c in row["choices"])
        question = f"{row['question']}\n{options}\nThink step by step, then give the letter of the answer."
        record = {"kind": "choice", "gold": row["answer"], "choices": row["choices"], "row": row["id"]}
        out.append(({**record, "src": "csqa dev"}, question))
    for row in _rows(data_dir / "strategyqa" / "dev.jsonl", STRATEGYQA_ROWS):
        question = f"{row['question']}\nThink step by step, then answer yes or no."
        out.append(
            ({"kind": "yesno", "gold": row["answer"], "row": row["id"], "src": "strategyqa dev"}, question)
        )
    return out


def main() -> None:
    """Generate greedily, one prompt at a time, appending each completion as soon as it is written."""
    import torch

    from reasongym.policy.loading import load_policy

    torch.set_num_threads(1)
    model, tokenizer = load_policy(os.environ["REASONGYM_SMOLLM2_GGUF"])
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for record, question in prompts(Path(os.environ["REASONGYM_DATA_DIR"])):
            chat = [{"role": "user", "content": question}]
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            ids = tokenizer(text, return_tensors="pt")
            with torch.no_grad():
                generated = model.generate(
                    **ids, max_new_tokens=MAX_NEW_TOKENS, do_sample=False, pad_token_id=tokenizer.pad_token_id
                )
            completion = tokenizer.decode(generated[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
            out.write(json.dumps({**record, "question": question, "completion": completion}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
