"""The math answer grader: our own grammar, cost refusal, and exact, numeric and sympy comparison.

Read in pipeline order: ``lexer`` (text to tokens), ``parser`` with ``atoms`` (tokens to the syntax tree
of ``nodes``), ``shape`` and ``units`` (answer-level clean-up), ``cost`` (refuse before computing),
``evaluate`` (exact and numeric values), ``numeric``, ``forms`` and ``equivalence`` (comparison in order
of cost), ``to_sympy`` (the last resort, in a worker under a time limit), and ``grade``, which holds the
grading rules a user reads and the entry point ``verify_math_answer``.

Importing this package imports nothing else: sympy loads only when a comparison needs it.
"""
