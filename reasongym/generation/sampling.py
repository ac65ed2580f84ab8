"""Choosing the next token from logits: temperature, top-k, top-p, and whose random numbers are drawn.

`HFGenerator` (`reasongym.generation.hf`) decodes a batch of rows step by step and asks this module for one
token per row. The random numbers come from one generator for the whole call (``SamplingParams.seed``), or
from one per prompt (``SamplingParams.prompt_seeds``), so that a prompt's completions never depend on the
other prompts batched with it.

With one generator and rows that may linger after they finish (the decode loop looks at them only every few
steps on a GPU, or keeps them on a static cache), every step draws one uniform number per row of the chunk,
finished or not, and picks each row's token by inverting its cumulative distribution: the stream a row sees
depends only on its place in the chunk and the step, so any look cadence samples the same tokens. A loop that
looks every step (the CPU's) keeps ``torch.multinomial`` over the live rows, the stream of earlier versions.
"""

from __future__ import annotations

import torch

from reasongym.generation.base import SamplingParams

__all__ = ["RowRNG", "inverse_cdf", "sample_tokens", "top_p_filter"]


class RowRNG:
    """The random generators of a chunk's rows: one for the whole call, or one per prompt (``prompt_seeds``).

    Row r of the call is sample ``r % n`` of prompt ``r // n``.
    """

    def __init__(
        self,
        generators: list[torch.Generator],
        n: int,
        first_row: int,
        chunk_rows: int | None = None,
        *,
        per_prompt: bool = False,
    ) -> None:
        """The generators (one, or one per prompt), the samples per prompt, the chunk's first row, its rows.

        With ``chunk_rows`` each step of one generator draws that many uniform numbers, one per row of the chunk
        (`inverse_cdf`); None: ``torch.multinomial`` over the rows asked for (the stream then depends on them);
        ``per_prompt``: the generators are the prompts' own (then each draws for its unfinished rows only,
        which takes a look at the rows on the host every step).
        """
        self.generators, self.n, self.first_row, self.chunk_rows = generators, n, first_row, chunk_rows
        self.per_prompt = per_prompt

    def multinomial(self, probs: torch.Tensor, rows: torch.Tensor, unfinished: torch.Tensor) -> torch.Tensor:
        """One token per row of [a, V] ``probs``, which are the chunk rows ``rows``.

        With one generator per prompt, each draws for its own unfinished rows only, so that its stream never
        depends on the other prompts of the call.
        """
        if self.per_prompt:
            return self._per_prompt(probs, rows, unfinished)
        if self.chunk_rows is None:  # the live rows draw: their number sets the stream
            return torch.multinomial(probs, 1, generator=self.generators[0]).squeeze(1)  # [a]
        uniform = torch.rand(self.chunk_rows, generator=self.generators[0], device=probs.device)  # [b]
        return inverse_cdf(probs, uniform[rows])  # [a]

    def _per_prompt(self, probs: torch.Tensor, rows: torch.Tensor, unfinished: torch.Tensor) -> torch.Tensor:
        """[a] tokens, each prompt's generator drawing for its unfinished rows only (a look at them, on the host)."""
        token = torch.zeros(len(probs), dtype=torch.long, device=probs.device)  # [a]
        prompt_of = (rows + self.first_row) // self.n  # [a]
        for prompt in prompt_of[unfinished].unique().tolist():
            mine = ((prompt_of == prompt) & unfinished).nonzero().squeeze(1)  # [a_p]
            drawn = torch.multinomial(probs[mine], 1, generator=self.generators[prompt])  # [a_p, 1]
            token[mine] = drawn.squeeze(1)
        return token


def inverse_cdf(probs: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """[a] tokens: per row of [a, V] ``probs``, the first whose cumulative probability passes ``uniform``.

    ``uniform`` ([a], in [0, 1)) is scaled by the row's total. In float64, so that a number just under 1
    never lands past the last token, and a token of probability 0 is never chosen.
    """
    cumulative = probs.double().cumsum(dim=-1)  # [a, V]
    target = uniform.double() * cumulative[:, -1]  # [a]
    token = torch.searchsorted(cumulative, target[:, None], right=True).squeeze(1)  # [a]
    return token.clamp_(max=probs.shape[-1] - 1)


def sample_tokens(
    logits: torch.Tensor, params: SamplingParams, rng: RowRNG, rows: torch.Tensor, unfinished: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pick one token per row from [b, V] logits; return it and its log-prob.

    The log-prob is the raw one (temperature 1), or with ``params.tempered_logprobs`` the one at the sampling
    temperature, before top-k/top-p: what a trainer's tempered loss computes for the same token.
    """
    if params.greedy:
        token = logits.argmax(dim=-1)  # [b]
    else:
        scores = logits / params.temperature if params.temperature != 1.0 else logits  # [b, V]
        if params.tempered_logprobs:
            logits = scores  # [b, V]; the log-prob below is then the tempered one
        if params.top_k:
            kth_best = scores.topk(min(params.top_k, scores.shape[-1]), dim=-1).values[:, -1:]  # [b, 1]
            scores = scores.masked_fill(scores < kth_best, float("-inf"))
        if params.top_p < 1.0:
            scores = top_p_filter(scores, params.top_p)
        token = rng.multinomial(scores.softmax(dim=-1), rows, unfinished)  # [b]
    chosen = logits.gather(-1, token[:, None]).squeeze(1)  # [b]
    return token, chosen - logits.logsumexp(dim=-1)


def top_p_filter(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    """Mask [b, V] scores outside the smallest set of tokens whose probability reaches ``top_p``."""
    sorted_scores, order = scores.sort(dim=-1, descending=True)  # [b, V]
    sorted_probs = sorted_scores.softmax(dim=-1)  # [b, V]
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs  # [b, V]; the best token always has 0
    remove = torch.zeros_like(scores, dtype=torch.bool).scatter_(-1, order, mass_before >= top_p)
    return scores.masked_fill(remove, float("-inf"))
