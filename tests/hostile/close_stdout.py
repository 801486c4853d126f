"""Hostile: answers initialize, then closes its stdout but stays alive
(reading and ignoring stdin until EOF).

Expected: exit 1; every case that asks something fails saying the adapter
closed its output.
"""
import os

import _common

_common.options()
for request in _common.requests():
    if request["method"] == "initialize":
        _common.emit(_common.reply(request["id"], _common.INIT_RESULT))
        os.close(1)
        break
for _ in _common.requests():
    pass
