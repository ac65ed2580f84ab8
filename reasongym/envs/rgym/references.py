"""Reference answers for the reasoning-gym tasks whose items carry none (``answer`` is None).

These tasks accept any valid solution and check it by simulation, so reasoning-gym stores no gold. A
reasongym problem needs one answer that grades correct (the conformance checker writes it, STaR's hint
shows it), so it is taken from the item where the item has an example (``graph_color``,
``propositional_logic``, ``rubiks_cube``) and computed where it has none: a breadth-first search for
``rush_hour`` (a shortest solution) and a straight-line plan for ``boxnet``. Grading never uses these:
the task's own checker decides, so any other valid solution is correct too.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

from reasongym.errors import ConfigError

_SIDE = 6  # Rush Hour: a 6x6 board, the red car "A" leaves on row 2
_EXIT = 2 * _SIDE + _SIDE - 2
_COORDINATES = re.compile(r"\d+\.?\d*")


def reference_answer(task: str, item: dict[str, Any]) -> str:
    """One answer that the task's ``score_answer`` grades 1 for ``item``.

    Raises:
        ConfigError: The task has neither a gold answer nor a way to make one here.
    """
    meta = item.get("metadata", {})
    if task == "graph_color":
        return json.dumps({str(vertex): color for vertex, color in meta["possible_answer"].items()})
    if task == "propositional_logic":
        return str(meta["example_answer"])
    if task == "rubiks_cube":
        return str(meta["example_correct_answer"])
    if task == "rush_hour":
        return solve_rush_hour(meta["board_config"])
    if task == "boxnet":
        return json.dumps(plan_boxnet(meta["initial_state"]))
    raise ConfigError(
        f"reasoning-gym task {task!r} gave an item without an answer, and none can be made here"
    )


def _pieces(board: str) -> tuple[list[tuple[int, int]], list[int], set[int]]:
    """(stride, size) of each car in label order, their positions, and the wall cells."""
    cells: dict[str, list[int]] = {}
    walls = set()
    for position, label in enumerate(board):
        if label == "x":
            walls.add(position)
        elif label not in "o.":
            cells.setdefault(label, []).append(position)
    shapes, positions = [], []
    for label in sorted(cells):
        where = cells[label]
        shapes.append((where[1] - where[0], len(where)))
        positions.append(where[0])
    return shapes, positions, walls


def _slides(shapes: list[tuple[int, int]], state: tuple[int, ...], walls: set[int]) -> list[tuple[int, int]]:
    """Every (car, steps) move from ``state``: each car slides any free distance along its axis."""
    taken = set(walls)
    for (stride, size), start in zip(shapes, state, strict=True):
        taken.update(start + stride * k for k in range(size))
    moves = []
    for car, ((stride, size), start) in enumerate(zip(shapes, state, strict=True)):
        for direction in (-1, 1):
            steps, front = 0, start + (size - 1) * stride if direction > 0 else start
            while True:
                cell = front + direction * stride * (steps + 1)
                same_line = stride == _SIDE or cell // _SIDE == start // _SIDE
                if not (0 <= cell < _SIDE * _SIDE and same_line) or cell in taken:
                    break
                steps += 1
                moves.append((car, direction * steps))
    return moves


def solve_rush_hour(board: str) -> str:
    """A shortest solution of a Rush Hour board (reasoning-gym's 36-character description) as moves.

    Raises:
        ConfigError: The board has no solution.
    """
    shapes, start, walls = _pieces(board)
    first = tuple(start)
    came_from: dict[tuple[int, ...], tuple[tuple[int, ...], int, int] | None] = {first: None}
    queue = deque([first])
    while queue:
        state = queue.popleft()
        if state[0] == _EXIT:
            moves = []
            while came_from[state] is not None:
                state, car, steps = came_from[state]  # type: ignore[misc]
                moves.append(f"{chr(ord('A') + car)}{steps:+d}")
            return " ".join(reversed(moves))
        for car, steps in _slides(shapes, state, walls):
            after = state[:car] + (state[car] + steps * shapes[car][0],) + state[car + 1 :]
            if after not in came_from:
                came_from[after] = (state, car, steps)
                queue.append(after)
    raise ConfigError(f"the Rush Hour board {board!r} has no solution")


def plan_boxnet(initial_state: dict[str, list[str]]) -> list[dict[str, str]]:
    """A plan that moves every box, one square per step, to the nearest target of its colour."""
    squares = {key: tuple(float(v) for v in _COORDINATES.findall(key)) for key in initial_state}
    targets = [
        (item[7:], where)
        for key, items in initial_state.items()
        for item in items
        if item.startswith("target_")
        for where in [squares[key]]
    ]
    plan: list[dict[str, str]] = []
    for key, items in initial_state.items():
        for box in (item for item in items if item.startswith("box_")):
            here = squares[key]
            goal = min((t for t in targets if t[0] == box[4:]), key=lambda t: _distance(here, t[1]))
            targets.remove(goal)
            while here != goal[1]:
                axis = 0 if here[0] != goal[1][0] else 1
                step = list(here)
                step[axis] += 1.0 if goal[1][axis] > here[axis] else -1.0
                plan.append({_agent(here): f"move({box}, square[{step[0]}, {step[1]}])"})
                here = (step[0], step[1])
            plan.append({_agent(here): f"move({box}, target_{box[4:]})"})
    return plan


def _distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _agent(square: tuple[float, ...]) -> str:
    return f"Agent[{square[0]}, {square[1]}]"
