"""``mahjong play`` driven through stdin, like a person, against the real stack (wall, rules,
scoring and gateway as processes on free ports)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mahjong_client import create_table
from tests.support.probes import refusing_address
from tests.support.stacks import local_stack

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
PLAY = [sys.executable, "-m", "services.cli", "play"]  # `mahjong play`


@pytest.fixture(scope="module")
def stack():
    with local_stack() as s:
        yield s


class Terminal:
    """The play command on pipes: lines out through a reader thread, answers in."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*PLAY, *args],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
        )
        self.lines: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def next_line(self, timeout: float = 60.0) -> str | None:
        line = self._q.get(timeout=timeout)
        if line is not None:
            self.lines.append(line)
        return line

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


MENU = re.compile(r"^\s+(\d+)\) (.*)$")


def choose(menu: list[tuple[int, str]], turn: int) -> str:
    """A person's answer: win, 敲 when offered, else a discard named by its tile (or a number
    now and then), and pass or pong on claims."""
    for n, label in menu:
        if label.startswith("胡") or label.startswith("敲"):
            return str(n)
    discards = [(n, label) for n, label in menu if label.startswith("打")]
    if discards:
        n, label = discards[-1]
        return label.split()[2][:2] if turn % 2 else str(n)
    pongs = [n for n, label in menu if label.startswith("碰")]
    if pongs and turn % 3 == 0:
        return str(pongs[0])
    return str(menu[-1][0])  # 过 pass


def play_through(term: Terminal, extras: tuple[str, ...] = (), seconds: float = 240) -> int:
    """Answer every prompt with :func:`choose` until the command ends; at the first prompt send
    ``extras`` first (each makes the command ask again). Returns the prompts answered."""
    menu: list[tuple[int, str]] = []
    turns = 0
    reasks = 0  # "choose" lines repeated after an extra, already answered
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = term.next_line()
        if line is None:
            break
        m = MENU.match(line)
        if m:
            menu.append((int(m.group(1)), m.group(2)))
        elif line.startswith("choose "):
            if reasks:
                reasks -= 1
                continue
            if turns == 0 and extras:
                for extra in extras:
                    term.send(extra)
                reasks = len(extras)
            turns += 1
            term.send(choose(menu, turns))
            menu = []
    return turns


def play_to_the_end(term: Terminal) -> int:
    """:func:`play_through` until the command exits (0, or the test fails); the prompts."""
    try:
        turns = play_through(term)
        assert term.proc.wait(timeout=30) == 0, term.output[-3000:]
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    return turns


def test_a_person_plays_a_whole_hand_through_stdin(stack):
    term = Terminal(["--gateway-addr", stack.gateway, "--hands", "1", "--name", "ann"])
    try:
        turns = play_through(term, extras=("h", "t", "99"))
        assert term.proc.wait(timeout=30) == 0, term.output[-3000:]
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    out = term.output
    assert re.search(r"table t_\w+: you are seat 0, three bots join you", out)
    assert "dealt to you:" in out
    assert re.search(r"\d[mpsz][一二三四五六七八九东南西北白发中]", out)  # mpsz and Chinese names
    assert re.search(r"timer: \d+s left", out)
    assert ">> your turn" in out
    assert "hint: " in out  # h asks the planning bot
    assert "not an option: '99'" in out
    assert "=== hand over:" in out
    assert "payments: seat 0(you)" in out
    assert "breakdown:" in out or "drawn (流局)" in out
    assert "wall seed revealed" in out
    assert "=== table finished after 1 hands (max_hands)" in out
    assert "played 1 hand; bye" in out
    assert turns > 0


@pytest.mark.parametrize(
    "args",
    [
        ["--ruleset", "shanghai-old"],
        ["--ruleset", "shanghai-baida", "--option", "baida_tiles.wildcards=flipped"],
    ],
    ids=["old", "baida-flipped"],
)
def test_a_person_plays_a_hand_of_each_preset(stack, args):
    term = Terminal(["--gateway-addr", stack.gateway, "--hands", "1", "--name", "bo", *args])
    turns = play_to_the_end(term)
    out = term.output
    assert turns > 0 and "=== hand over:" in out, out[-3000:]
    assert "=== table finished after 1 hands (max_hands)" in out, out[-3000:]
    if "shanghai-baida" in args:
        # the indicator turned up, told as it happens and shown with the table
        flip = re.search(r"翻百搭: (\d[mpsz])\S* turned up — every (\d[mpsz])\S* is 百搭", out)
        assert flip, out[-3000:]
        assert re.search(rf" · 百搭 {flip.group(2)}\S* \({flip.group(1)}\S* turned up\) ===", out)


def test_quitting_mid_hand_leaves_and_pays_the_escape_penalty(stack):
    term = Terminal(["--gateway-addr", stack.gateway, "--hands", "3", "--stake", "5"])
    try:
        while True:
            line = term.next_line()
            assert line is not None, term.output[-3000:]
            if line.startswith("choose "):
                term.send("q")
                break
        assert term.proc.wait(timeout=60) == 0, term.output[-3000:]
        while term.next_line(timeout=5) is not None:
            pass
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    out = term.output
    assert "leaving the table (quit)" in out
    # RULES §9: 1 × stake (5) × base_points (2)
    assert "escape penalty paid: 10 chips" in out
    assert "played 0 hands; bye" in out


def test_a_person_joins_an_open_seat_of_an_existing_table(stack):
    table = create_table(stack.gateway, [None, "", None, None], max_hands=1)
    assert table.seat_tokens[1] == ""  # an open seat: no token until someone joins
    term = Terminal(["--gateway-addr", stack.gateway, "--table", table.table_id, "--name", "eve"])
    turns = play_to_the_end(term)
    out = term.output
    assert turns > 0, out[-3000:]
    assert "seat 1 you" in out, out[-3000:]  # JoinSeat gave the open seat 1
    assert "=== table finished after 1 hands" in out, out[-3000:]


def test_an_unreachable_gateway_is_reported_plainly():
    with refusing_address() as nowhere:
        done = subprocess.run(
            [*PLAY, "--gateway-addr", nowhere],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert "UNAVAILABLE" in done.stdout
    assert "is a gateway running at 127.0.0.1:" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_signed_in_person_plays_a_room_hand_for_silver():
    """``mahjong play --local --sign-in``: the stack's development issuer signs the person in,
    matchmaking seats them at a private room's table with three bots, and the hand moves silver
    in the ledger."""
    # the stack it starts holds no claim window (the gateway's settings by environment): the
    # holds add 0.6-1 s to each of some 70 discards, and are tested on their own
    # (tests/e2e/test_claim_window_timing.py)
    no_holds = {
        "MAHJONG_GATEWAY_CLAIM_WINDOW_FLOOR_MS": "0",
        "MAHJONG_GATEWAY_CLAIM_WINDOW_JITTER_MS": "0",
    }
    term = Terminal(["--local", "--sign-in", "--hands", "1", "--name", "Mei"], env=no_holds)
    try:
        turns = play_through(term)
        assert term.proc.wait(timeout=60) == 0, term.output[-3000:]
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    out = term.output
    assert re.search(
        r"signed in as p-\w+ \(1000 silver\); room \d{6}, table t_\w+: you are seat 0", out
    )
    assert "=== hand over:" in out and "played 1 hand; bye" in out
    assert turns > 0
