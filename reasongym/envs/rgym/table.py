"""The table of reasoning-gym tasks that reasongym registers, made from reasoning-gym 0.1.25.

One row per task: ``name: (category, grader, levels, description)``. Listing environments reads this
table only; reasoning-gym itself (whose ``import`` loads every one of its tasks) is imported when one
of these environments is made. ``tests/envs/test_reasoning_gym.py`` checks the table against the
installed reasoning-gym: the same task names (``composite`` aside) and curricula.

**Which grader, and why** (``grader``):

- ``math``: reasongym's math verifier against the task's gold. For tasks whose answer is one exact
  number or expression, where the task's own ``score_answer`` is a string comparison (so ``1,080``,
  ``4.0`` or ``\\frac{3}{4}`` for ``0.75`` score 0), takes the first number of the answer
  (``gsm_symbolic``: "12 or 288" scores as 12), scores a set of roots by a decaying distance
  (``polynomial_equations``), or hands the model's text to sympy's ``parse_expr``, which calls
  ``eval`` (``simple_integration``, ``intermediate_integration``, ``polynomial_multiplication``).
- ``countdown``: reasongym's Countdown verifier (``countdown``, ``puzzle24``): their scorers also
  ``parse_expr`` the model's text; ours parses arithmetic itself.
- ``exact``: normalised exact match (``game_of_life_halting``: its ``score_answer`` compares
  ``bool(answer)`` with ``bool(gold)``, so any non-empty text, "False" and garbage included, scores 1).
- ``task``: the task's own ``score_answer`` on the extracted answer, correct only at a score of 1.
  The rest: answers with a stated tolerance (``power_function``: 3 significant figures,
  ``decimal_arithmetic``, ``coin_flip``, ``number_format``), a required form (``fraction_simplification``
  wants lowest terms, ``prime_factorization`` a product, ``base_conversion`` digits of another base),
  and puzzles with many valid solutions that the scorer checks (sudoku, n-queens, graph colouring,
  Rush Hour, Boxnet). Four of them (``binary_matrix``, ``spiral_matrix``, ``string_insertion``,
  ``n_queens``) ``eval`` an answer that failed the exact check, for partial credit: such an answer
  reaches their scorer only when it is plain data (see ``reasongym.envs.rgym.grading``).

``levels``: the difficulty levels (1 = the curriculum's first level) that generated problems in a
probe of every level of every curriculum (levels whose configuration reasoning-gym itself rejects, or
that took over 5 s for three problems, are left out: ``caesar_cipher`` 3-4, ``jugs`` 3-4, every level
of ``knight_swap``, ``modulo_grid`` 2, ``n_queens`` 5, ``rubiks_cube`` 5, ``sokoban`` 1, ``survo`` 3-4,
``zebra_puzzles`` 5-6). Empty: no curriculum (or no working level); the task's default configuration only.

Not registered: ``composite``, a weighted mixture of other tasks that needs a list of them to exist.
"""

from __future__ import annotations

REASONING_GYM_VERSION = "0.1.25"
"""The reasoning-gym release this table was made from (``pip install 'reasongym[reasoning-gym]'`` pins it)."""
GRADERS = ("task", "math", "countdown", "exact")
"""The graders a task can have (module docstring), each also the answer type of its task's problems (``task``:
the task's own ``score_answer``)."""
EVAL_GUARDED = frozenset({"binary_matrix", "spiral_matrix", "string_insertion", "n_queens"})
"""Tasks whose ``score_answer`` calls ``eval`` on an answer that failed its exact check."""

# name: (category, grader, levels, description)
TASKS: dict[str, tuple[str, str, str, str]] = {
    "ab": ("algorithmic", "task", "1-4", "A::B token-rewriting puzzles (Taelin's A::B system)"),
    "acre": (
        "induction",
        "task",
        "",
        "Abstract causal reasoning (ACRE): does a set of objects turn the detector on",
    ),
    "advanced_geometry": (
        "geometry",
        "task",
        "1-4",
        "Coordinate geometry: orthocenters, incircle radii, angles",
    ),
    "aiw": ("logic", "math", "1-9", '"Alice in Wonderland" family-counting questions'),
    "arc_1d": ("arc", "task", "1-4", "ARC 1D tasks by randomly selecting from available task generators"),
    "arc_agi": (
        "arc",
        "task",
        "1-4",
        "ARC-AGI grid puzzles: infer the transformation from examples, apply it to a test grid",
    ),
    "base_conversion": ("algorithmic", "task", "1-5", "Base conversion tasks"),
    "basic_arithmetic": (
        "arithmetic",
        "math",
        "1-5",
        "Integer arithmetic expressions of configurable length",
    ),
    "bf": ("code", "task", "1-3", "BF tasks"),
    "binary_alternation": ("algorithmic", "math", "1-4", "Binary Alternation puzzles"),
    "binary_matrix": ("algorithmic", "task", "1-4", "Binary Matrix puzzles"),
    "bitwise_arithmetic": (
        "arithmetic",
        "task",
        "1-10",
        "Tasks testing understanding of bitwise arithmetic operations",
    ),
    "boxnet": (
        "games",
        "task",
        "1-9",
        "Plan moves of boxes to their targets on a grid of agents; any plan that delivers every box",
    ),
    "caesar_cipher": ("algorithmic", "task", "1-2", "Caesar cipher encryption/decryption tasks"),
    "calendar_arithmetic": (
        "arithmetic",
        "task",
        "1-4",
        "Calendar arithmetic: weekdays, day counts, leap years",
    ),
    "chain_sum": ("arithmetic", "math", "1-11", "Simple arithmetic tasks using only + and - operators"),
    "circuit_logic": ("logic", "math", "1-5", "Evaluate an ASCII digital logic circuit for given inputs"),
    "codeio": (
        "code",
        "task",
        "1-4",
        "Predict a program's output from its input (or an input from its output)",
    ),
    "coin_flip": (
        "probability",
        "task",
        "1-13",
        "Coin-flip probability problems (exact k heads / at-least k heads)",
    ),
    "color_cube_rotation": ("cognition", "task", "1-5", "Color cube rotation reasoning tasks"),
    "complex_arithmetic": ("algebra", "task", "1-4", "Complex number arithmetic problems"),
    "count_bits": ("arithmetic", "math", "1-5", "Count Bits puzzles"),
    "count_primes": ("algorithmic", "math", "1-5", "Count Primes puzzles"),
    "countdown": ("games", "countdown", "1-5", "Countdown Number Game tasks"),
    "course_schedule": ("graphs", "task", "1-5", "Course Schedule puzzles"),
    "cryptarithm": ("algorithmic", "task", "1-4", "Solve a letter-for-digit addition puzzle"),
    "decimal_arithmetic": (
        "arithmetic",
        "task",
        "1-4",
        "Basic arithmetic tasks using Decimal arithmetic and proper operator precedence",
    ),
    "decimal_chain_sum": (
        "arithmetic",
        "math",
        "1-5",
        "Simple decimal arithmetic tasks using only + and - operators",
    ),
    "dice": ("arithmetic", "math", "1-4", "Dice-based puzzles"),
    "emoji_mystery": (
        "games",
        "task",
        "1-6",
        "Decode a sentence hidden in the variation selectors of an emoji",
    ),
    "family_relationships": ("graphs", "task", "1-9", "Family relationship reasoning tasks"),
    "figlet_font": ("cognition", "task", "1-6", "FigletFont tasks"),
    "fraction_simplification": ("arithmetic", "task", "1-4", "Fraction simplification tasks"),
    "futoshiki": ("games", "task", "1-4", "Futoshiki puzzles with configurable board size and difficulty"),
    "game_of_life": ("algorithmic", "task", "1-4", "Game of Life: the board after N steps"),
    "game_of_life_halting": (
        "algorithmic",
        "exact",
        "1-4",
        "Does a Game of Life board halt within N steps (True or False)",
    ),
    "gcd": ("arithmetic", "math", "1-4", "Greatest Common Divisor (GCD) tasks"),
    "graph_color": ("algorithmic", "task", "1-4", "Graph coloring problems"),
    "group_anagrams": ("algorithmic", "task", "1-4", "Group Anagrams puzzles"),
    "gsm_symbolic": (
        "arithmetic",
        "math",
        "",
        "GSM8K-style word problems from symbolic templates with fresh numbers",
    ),
    "intermediate_integration": (
        "algebra",
        "math",
        "1-8",
        "Antiderivatives by substitution, parts and other techniques",
    ),
    "isomorphic_strings": ("algorithmic", "task", "1-4", "Isomorphic Strings puzzles"),
    "jugs": (
        "algorithmic",
        "task",
        "1-2",
        "Water-jug puzzles: reach a target volume with fill, empty and pour moves",
    ),
    "kakurasu": ("games", "task", "1-4", "Kakurasu puzzles with configurable size"),
    "knight_swap": ("games", "task", "", "Knight Swap puzzles"),
    "knights_knaves": ("logic", "task", "1-4", "Random knights and knaves problems"),
    "largest_island": ("graphs", "math", "1-4", "Largest Island puzzles"),
    "lcm": ("arithmetic", "math", "1-4", "Least Common Multiple (LCM) tasks"),
    "leg_counting": ("arithmetic", "math", "1-36", "Leg counting arithmetic tasks"),
    "letter_counting": ("algorithmic", "math", "1-8", "Letter counting tasks from text spans"),
    "letter_jumble": ("algorithmic", "task", "1-5", "Word letter jumbling tasks"),
    "list_functions": ("induction", "task", "", "Infer a list-to-list function from examples and apply it"),
    "mahjong_puzzle": ("games", "task", "1-4", "Mahjong Puzzle puzzles"),
    "manipulate_matrix": ("algorithmic", "task", "1-5", "Manipulate Matrix puzzles"),
    "maze": ("games", "math", "1-4", "Mazes with guaranteed shortest path distance from start to goal"),
    "mini_sudoku": ("games", "task", "1-5", "4x4 sudoku puzzles"),
    "modulo_grid": ("cognition", "task", "1,3-6", "ModuloGrid tasks"),
    "n_queens": ("games", "task", "1-4", "N Queens puzzles"),
    "needle_haystack": (
        "cognition",
        "task",
        "1-4",
        "Needle in a haystack: find one fact among many statements",
    ),
    "number_filtering": ("algorithmic", "task", "1-4", "Number filtering tasks"),
    "number_format": (
        "arithmetic",
        "task",
        "1-4",
        "Pick the largest (or smallest) of numbers written in different formats",
    ),
    "number_sequence": (
        "cognition",
        "math",
        "1-4",
        "Number sequence completion tasks with dynamic pattern generation",
    ),
    "number_sorting": ("algorithmic", "task", "1-8", "Number sorting tasks"),
    "palindrome_generation": ("algorithmic", "task", "1-4", "Arrange given letters into a palindrome"),
    "palindrome_partitioning": ("algorithmic", "task", "1-4", "Palindrome Partitioning puzzles"),
    "path_star": ("graphs", "task", "1-4", "Path-star graphs: the path from the center to a goal leaf"),
    "polynomial_equations": ("algebra", "math", "1-4", "All real roots of a random polynomial equation"),
    "polynomial_multiplication": ("algebra", "math", "1-4", "Expand a product of random polynomials"),
    "pool_matrix": ("algorithmic", "task", "1-4", "Pool Matrix puzzles"),
    "power_function": ("arithmetic", "task", "1-5", "Power Function puzzles"),
    "prime_factorization": ("arithmetic", "task", "1-4", "Prime factorization tasks"),
    "products": ("arithmetic", "math", "1-11", "Multiplication tasks with configurable number of terms"),
    "propositional_logic": ("logic", "task", "1-5", "Propositional logic reasoning tasks"),
    "puzzle24": ("games", "countdown", "1-7", "Make 24 from four numbers with + - * /"),
    "quantum_lock": ("graphs", "task", "1-10", "QuantumLock tasks"),
    "ransom_note": ("algorithmic", "task", "1-4", "Ransom Note puzzles"),
    "rearc": ("arc", "task", "1-7", "rearc"),
    "rectangle_count": ("cognition", "math", "1-5", "ASCII rectangle counting puzzles"),
    "rotate_matrix": ("algorithmic", "task", "1-5", "Rotate Matrix puzzles"),
    "rotten_oranges": ("algorithmic", "math", "1-4", "Rotten Oranges puzzles"),
    "rubiks_cube": ("cognition", "task", "1-4", "RubiksCube tasks"),
    "rush_hour": (
        "games",
        "task",
        "1-4",
        "Rush Hour sliding-car puzzles; any sequence of moves that frees the red car",
    ),
    "self_reference": ("logic", "math", "1-10", "Self-referential puzzles"),
    "sentence_reordering": ("algorithmic", "task", "1-4", "Sentence reordering tasks from text spans"),
    "shortest_path": ("graphs", "task", "1-4", "Shortest Path puzzles"),
    "simple_equations": ("algebra", "math", "1-4", "Simple equations with one variable to solve"),
    "simple_geometry": ("geometry", "math", "1-4", "A dataset for simple polygon angle-finding tasks"),
    "simple_integration": ("algebra", "math", "1-4", "Simple integration problems with one variable"),
    "sokoban": ("games", "task", "2-14", "Sokoban games"),
    "spell_backward": ("algorithmic", "task", "1-5", "Tasks to spell words backward"),
    "spiral_matrix": ("algorithmic", "task", "1-4", "Spiral Matrix puzzles"),
    "string_insertion": ("algorithmic", "task", "1-4", "String Insertion puzzles"),
    "string_manipulation": ("algorithmic", "task", "1-5", "Apply string rewriting rules until none applies"),
    "string_splitting": ("algorithmic", "task", "1-4", "String Splitting puzzles"),
    "string_synthesis": ("algorithmic", "task", "1-4", "String Synthesis puzzles"),
    "sudoku": ("games", "task", "1-5", "Sudoku puzzles"),
    "survo": ("games", "task", "1-2", "survo"),
    "syllogism": ("logic", "task", "1-4", "Syllogism reasoning tasks"),
    "time_intervals": (
        "arithmetic",
        "task",
        "1-7",
        "Time interval calculation tasks with various formats and complexities",
    ),
    "tower_of_hanoi": ("games", "task", "1-4", "Tower of Hanoi problems with solutions"),
    "tsumego": ("games", "task", "1-4", "Tsumego problems"),
    "word_ladder": ("algorithmic", "task", "1-3", "Word ladder transformation tasks"),
    "word_sequence_reversal": ("algorithmic", "task", "1-4", "Word sequence reversal tasks from text spans"),
    "word_sorting": ("algorithmic", "task", "1-5", "Word sorting tasks"),
    "zebra_puzzles": ("logic", "task", "1-4", "Zebra (Einstein) logic puzzles"),
}


def levels_of(name: str) -> tuple[int, ...]:
    """The difficulty levels of task ``name`` as integers (``"1,3-6"`` is 1, 3, 4, 5, 6)."""
    spec = TASKS[name][2]
    levels: list[int] = []
    for part in filter(None, spec.split(",")):
        first, _, last = part.partition("-")
        levels.extend(range(int(first), int(last or first) + 1))
    return tuple(levels)
