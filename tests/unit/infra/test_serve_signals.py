"""``mahjong serve`` stops promptly on a SIGTERM whichever thread the kernel hands it to.

The kernel may deliver a process-directed signal to any thread; CPython runs the Python handler
in the main thread, which only notices when it wakes. A server whose main thread waited without
a timeout took seconds to notice (once past the supervisor's 15 s, which SIGKILLed it). Here a
thread of the server process sends SIGTERM to itself, the case a main-thread-only test never
sees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = """
import os, signal, sys, threading, time
from services.rules.server import SPEC
from infra.server import serve

PORT_FILE = sys.argv[1]

def fire():
    while not os.path.exists(PORT_FILE):  # written once it serves, its handlers set
        time.sleep(0.01)
    print("signal", time.monotonic(), flush=True)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # to this thread, not main

threading.Thread(target=fire, daemon=True).start()
serve(SPEC, ["--insecure", "--port", "0", "--metrics-port", "0", "--drain-seconds", "0",
             "--grace-seconds", "0", "--port-file", PORT_FILE])
print("stopped", time.monotonic(), flush=True)
"""


def test_a_sigterm_taken_by_another_thread_stops_the_server_promptly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "ports.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    times = dict(line.split() for line in done.stdout.splitlines())
    waited = float(times["stopped"]) - float(times["signal"])
    # the main thread wakes every SIGNAL_POLL_SECONDS (0.2 s); before, it waited seconds
    assert waited < 2.0, f"the server took {waited:.1f} s to act on SIGTERM"
