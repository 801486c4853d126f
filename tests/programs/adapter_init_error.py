"""A tiny adapter for tests/test_cli.py: answers initialize with an error
(the suite cannot run: exit 2)."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" in msg:
        error = {"code": 1, "message": "backend unreachable", "data": {"kind": "network"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}) + "\n")
        sys.stdout.flush()
