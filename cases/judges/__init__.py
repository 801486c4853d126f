"""The run-wide judges: verdicts drawn from the whole run, not from one case.

The claims an adapter makes (``claims``), the frame monitor's findings handed
to the owner of each rule (``monitoring``), optional params asked null and
left out (``null_params``), the rules table (``rules``, ``rules.json``) and the
coverage map over it (``coverage``). They import the kit and the registry.
"""
