"""A tiny adapter for tests/test_cli.py: answers initialize, then never answers
anything; touches the file named by $FORGE_TEST_STALL_MARK at the first other
request (so a test knows the cases are running before it sends Ctrl-C)."""
import json
import os
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocol": 1, "name": "stalls"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    elif os.environ.get("FORGE_TEST_STALL_MARK"):
        open(os.environ["FORGE_TEST_STALL_MARK"], "a").close()
