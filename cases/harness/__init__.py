"""The harness: what runs the cases against an adapter inside pytest.

The pytest plugin (``plugin``), the session behind its hooks and the groups'
run order (``session``), the adapter slots and spawns (``providers``), the
fixture and its private copies (``fixture_view``, ``copy_watch``), a --jobs
worker (``worker``), the skips naming another case's defect (``attribution``),
the stop path (``stopping``) and the end of a run, once
(``finish``). It imports the judges, the report and the kit.
"""
