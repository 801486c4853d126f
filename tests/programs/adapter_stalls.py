"""A tiny adapter for tests/test_cli.py: answers initialize, then never answers
anything else."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocol": 1, "name": "stalls"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
