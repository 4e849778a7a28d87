"""Cross-language check: the Node.js client (@grpc/grpc-js + @grpc/proto-loader, loading the
same .proto files) signs in (an ID token of the stack's development issuer, SignIn on
matchmaking), opens a private room with three bots, takes its seat with JoinSeat and its session
(or, unsigned, creates a table with an open seat) and plays a whole hand against the bots,
cutting its event stream once and resuming it, over the real stack (wall, rules, scoring,
gateway and matchmaking as processes on free ports). It reaches the public ports over TLS,
trusting the development CA (.data/tls/ca.crt) as a player does, and a certificate that CA did
not sign is refused.

``npm ci`` installs the locked packages into tests/clients/node/node_modules once (it is
re-run only when package-lock.json is newer than the installed tree).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from devkit import dev_ca
from devkit.stack import SIGNED_IN_STACK, LocalStack
from tests.support.stacks import local_stack

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
PROTOS = HERE.parents[2] / "protos"


def _npm_install() -> None:
    marker = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    assert npm, "npm is needed for the Node.js client test"
    cmd = [npm, "ci", "--no-audit", "--no-fund"]
    done = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:  # e.g. an npm too old for this lockfile version
        cmd = [npm, "install", "--no-audit", "--no-fund"]
        done = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def node():
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is not installed")
    _npm_install()
    return exe


def run_client(node: str, stack: LocalStack, *flags: str, timeout: float):
    """play_hand.js against ``stack``'s gateway (its public port) with ``flags``."""
    return subprocess.run(
        [node, "play_hand.js", "--gateway", stack.gateway, "--protos", str(PROTOS), *flags],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def play_hand(node: str, stack: LocalStack, *flags: str, timeout: float) -> dict:
    """play_hand.js against ``stack``'s gateway with ``flags``: its report (its last line)."""
    done = run_client(node, stack, *flags, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:] + stack.log_tail("gateway")
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_node_client_plays_a_whole_hand_against_bots(node):
    """Signed in: the development issuer's ID token, SignIn on matchmaking, a private room with
    three bots, the seat taken by JoinSeat with the session (no seat token)."""
    with local_stack(SIGNED_IN_STACK) as stack:
        report = play_hand(
            node,
            stack,
            "--drop-after", "30",
            "--matchmaking", stack.address("matchmaking"),
            "--issuer", stack.issuer.base_url,
            "--name", "Node.js",
            timeout=180,
        )  # fmt: skip
    assert report["finished"] is True
    assert report["player_id"].startswith("p-") and report["silver"] == 1000
    assert report["seat"] == 0  # the room's owner sits first
    assert report["sequence_ok"] is True
    # batched: a step's events (the deal's, an action's and the draw after it) in one message
    assert 0 < report["messages"] < report["events"]
    # the stream was cut after 30 events and resumed from the last number seen; a fresh
    # subscription from 0 afterwards, one event per message, holds exactly the events the
    # client received
    assert len(report["subscribes"]) == 2 and report["subscribes"][0] == 0
    assert report["subscribes"][1] > 0
    assert report["resume_exact"] is True
    assert report["leaks"] == []
    assert report["own_tiles_dealt"] in (13, 14)
    assert report["prompts"] > 0 and report["actions"] > 0
    assert report["kinds"]["hand_started"] == 1 and report["kinds"]["hand_result"] == 1
    assert report["outcome"] in (1, 2)  # a win or a drawn hand
    assert len(report["payments"]) == 4
    assert sum(report["payments"]) + report["house"] == 0
    # the wall commitment published at the start holds for the seed revealed at the end
    assert hashlib.sha256(bytes.fromhex(report["seed"])).hexdigest() == report["commitment"]


def test_node_client_waits_as_flood_control_asks(node):
    """A seat token allowed 4 calls a second: the client's calls are refused RESOURCE_EXHAUSTED
    with RetryInfo, and it sends them again after the wait asked for, so it plays the hand
    through with nothing refused for good."""
    args = ["--seat-calls-per-second", "4", "--seat-call-burst", "4"]
    with local_stack(extra_args={"gateway": args}) as stack:
        report = play_hand(node, stack, timeout=300)
    assert report["finished"] is True and report["resume_exact"] is True
    assert report["flood_waits"] > 0  # the limit was met, and waited out
    assert report["refused"] == []
    assert report["actions"] > 0


def test_node_client_goes_past_a_gateway_that_never_answers(node):
    """A paused replica (issue 32): its first gateway address accepts connections and answers
    nothing (a listening socket never read, as a SIGSTOPped process's is). Told the other
    replica (--fallbacks) and a 3 s lease, each call's try is hedged on it after half the lease,
    the stream opens where the calls were answered, and its heartbeats name the gateway's
    lease: the hand is played through."""
    with socket.socket() as frozen, local_stack() as stack:
        frozen.bind(("127.0.0.1", 0))
        frozen.listen(16)  # the kernel completes each handshake; nobody ever reads
        paused = f"127.0.0.1:{frozen.getsockname()[1]}"
        done = subprocess.run(
            [node, "play_hand.js", "--gateway", paused, "--fallbacks", stack.gateway,
             "--lease-ms", "3000", "--protos", str(PROTOS)],
            cwd=HERE, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["finished"] is True and report["resume_exact"] is True
    assert report["hedges"] >= 1  # CreateTable: sent to the frozen address, then elsewhere
    assert report["heartbeats"] >= 1 and report["lease_ms"] == 30_000  # the gateway's default
    assert report["actions"] > 0 and report["refused"] == []


def test_node_client_refuses_a_gateway_whose_certificate_its_ca_did_not_sign(node, tmp_path):
    """The client verifies the gateway: trusting another CA (here a throwaway one), its first
    call fails in the handshake, UNAVAILABLE."""
    other = tmp_path / "other-ca"
    dev_ca.ensure_ca(other)
    with local_stack() as stack:
        done = run_client(node, stack, "--ca", str(other / "ca.crt"), timeout=60)
    assert done.returncode != 0
    failed = next(line for line in done.stderr.splitlines() if "node client failed" in line)
    assert "14 UNAVAILABLE" in failed and "verify the first certificate" in failed, failed
