"""Hostile: from its first instant floods stdout with unsolicited
notifications, without end; answers initialize (in the middle of the flood)
and nothing else.

Expected: exit 1; cases that ask something time out; the suite's memory
stays bounded however long the flood runs (its transcript is a ring).
"""
import threading

import _common

LINE = b'{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":4,"message":"flood"}}\n'
BATCH = LINE * 256
lock = threading.Lock()


def flood() -> None:
    while True:
        with lock:
            _common.emit(BATCH)


_common.options()
threading.Thread(target=flood, daemon=True).start()
for request in _common.requests():
    if request["method"] == "initialize":
        with lock:
            _common.emit(_common.reply(request["id"], _common.INIT_RESULT))
_common.block_forever()    # stdin closed: keep flooding until killed
