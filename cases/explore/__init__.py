"""``run --explore``: hypothesis-drawn repository sets and request programs.

``drawing`` (the hypothesis strategy of a repository set; fixture/drawn.py
writes it), ``machine`` (the RuleBasedStateMachine: a drawn set, one
adapter, drawn requests), ``judges`` (each reply's rule and its owning
case), ``runner`` (seed, budget, shrinking, the report and exit code).
"""
