"""``run --explore``: hypothesis-drawn repository sets and request programs.

``machine`` (the RuleBasedStateMachine: a drawn set from fixture/drawn.py,
one adapter, drawn requests), ``judges`` (each reply's rule and its owning
case), ``runner`` (seed, budget, shrinking, the report and exit code).
"""
