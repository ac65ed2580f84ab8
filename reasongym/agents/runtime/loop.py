"""The step loop every RL trainer runs on its `RLSession`: a trainer says what one step is, nothing else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reasongym.agents.runtime.session import RLResult, RLSession


def run_steps(session: RLSession, one_step: Callable[[], tuple[Any, dict[str, float]]]) -> RLResult:
    """Evaluate the starting model (a fresh run), train the session's remaining steps, each ``one_step()`` (its
    rollout batch and metrics), until the last or until a hook stops the run, then close the session. Ctrl-C or
    SIGTERM saves the last finished step and stops the run (`RLSession.interrupted`)."""
    try:
        session.begin()
        for step in session.remaining_steps():
            if session.stop_before(step):
                break
            batch, metrics = one_step()
            if session.finish_step(step, metrics, batch):
                break
        session.end()
    except KeyboardInterrupt:
        raise session.interrupted() from None
    finally:
        session.close()
    return session.result()
