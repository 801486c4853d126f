"""The command line: options, entry points, the --jobs parent, --replay.

Argument parsing and the pre-flight (``command``), the three ways in
(``entry``), the parent side of --jobs (``jobs``) and --replay (``replay``).
The top of the house: nothing in cases/ imports it.
"""
