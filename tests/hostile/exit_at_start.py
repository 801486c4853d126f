"""Hostile: exits with code 3 at once, before reading or answering anything.

Expected: the suite cannot run (exit 2), saying the adapter exited with code 3.
"""
import os
import sys

os.write(2, b"[hostile exit_at_start] giving up before the handshake\n")
sys.exit(3)
