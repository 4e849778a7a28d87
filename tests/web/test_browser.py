"""The web table in a real browser: headless Chromium (Debian's, driven by playwright-core from
web/node_modules) plays a person's hand at a real local stack over Connect and over gRPC-Web
(web/tests/table.test.mjs: sign in through the stack's development issuer and matchmaking's web
port, a private room with three bots, click the offered options to the hand's end, reload
mid-hand, the result's breakdown and the wall's verification, the session refreshed before it
expires, a spectator, a forged token; a guest's casual flipped-百搭 table showing its indicator
and wild kind, and its hint). Connect over HTTP runs all of it, with the phone and keyboard
tests (web/tests/phone.test.mjs) beside it; the other transports play the signed-in hand.

Both ways the page is served: plain HTTP on loopback (development's default, a secure context
for browsers), and HTTPS with the gateway's development certificate (``--web-tls-dir``), which
Chromium trusts through the pin of that certificate's key and nothing wider (no blanket
ignoring of certificate errors; the page refuses to load without the pin).
Screenshots land in web/test-artifacts/ (https/ for the HTTPS runs; not in git). ``make test``
installs Chromium and the npm packages and builds the page first."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from devkit.stack import SIGNED_IN_STACK
from infra.supervisor import DEV_TLS_ROOT
from tests.support.browser import (
    ARTIFACTS,
    assert_screenshots,
    check_prerequisites,
    clear_screenshots,
    run_node_tests,
    stack_env,
)
from tests.support.stacks import local_stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def spki_pin(cert_file: Path) -> str:
    """Chromium's pin of a certificate's key: base64 of the SHA-256 of its SubjectPublicKeyInfo
    (the value of --ignore-certificate-errors-spki-list)."""
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


SHOTS = ("mid-hand", "result", "spectator", "forged-token")
BAIDA_SHOTS = ("baida-flipped",)  # the guest's 翻百搭 table: once, with the phone's run
# table.test.mjs and phone.test.mjs run at once (--test-concurrency=2): their tables are apart.
NODE_TESTS = ("tests/table.test.mjs", "tests/phone.test.mjs")
# The other transports play the signed-in hand (and HTTPS its pin); what the page shows does
# not depend on the transport, so the guest's 百搭 table and the phone run once.
TRANSPORT_TESTS = "plays a whole hand|over HTTPS"
PHONE_SHOTS = (
    "phone-table",
    "phone-landscape",
    "phone-result",
    "desktop-keyboard",
    "desktop-result",
    "desktop-leave",
)
# Matchmaking's shortest session (its minimum): the page refreshes it 15 s before it expires,
# which the test waits for once (over Connect and plain HTTP; the other runs leave it).
SESSION_SECONDS = 60


# Both protocols over plain HTTP; over HTTPS the page's trust (the pin) is a matter of the
# connection, not of the protocol, so Connect alone (gRPC-Web over HTTPS is checked call by call
# in test_protocols.py).
@pytest.mark.parametrize(
    ("protocol", "scheme"), [("connect", "http"), ("grpc-web", "http"), ("connect", "https")]
)
def test_a_person_plays_a_hand_in_the_browser(protocol, scheme):
    check_prerequisites()
    # bots think a little, as at a real table (and the screenshots catch the game moving); the
    # table pauses between hands until the person presses Next (phone.test.mjs)
    gateway = ["--bot-delay-ms", "60", "--between-hands-ms", "20000"]
    first = (protocol, scheme) == ("connect", "http")  # the phone, keyboard and 百搭 tests: once
    web_tls = DEV_TLS_ROOT / "gateway"  # the development CA's certificate for the gateway
    if scheme == "https":
        gateway += ["--web-tls-dir", str(web_tls)]
    artifacts = ARTIFACTS / ("https" if scheme == "https" else "")
    shots = [f"{protocol}-{name}" for name in (*SHOTS, *(BAIDA_SHOTS if first else ()))]
    shots += PHONE_SHOTS if first else ()
    clear_screenshots(shots, artifacts)  # what is checked below is this run's
    matchmaking = ["--session-lifetime-seconds", str(SESSION_SECONDS)]
    extra = {"gateway": gateway, "matchmaking": matchmaking}
    with local_stack(SIGNED_IN_STACK, extra_args=extra) as stack:
        env = {
            **stack_env(stack, artifacts),
            "WEB_PROTOCOL": protocol,
            "SESSION_SECONDS": str(SESSION_SECONDS) if first else "",
            "PHONE": "1" if first else "",
        }
        env.pop("WEB_SPKI", None)
        if scheme == "https":
            # IP SAN 127.0.0.1; the pin of the key the gateway serves (made at the stack's
            # start if missing, so read now)
            env["WEB_URL"] = f"https://127.0.0.1:{stack.web_ports['gateway']}"
            env["WEB_SPKI"] = spki_pin(web_tls / "tls.crt")
        run = run_node_tests(
            stack,
            NODE_TESTS if first else NODE_TESTS[:1],
            env,
            timeout=400,
            concurrency=2,
            name_pattern="" if first else TRANSPORT_TESTS,
        )
    # the HTTPS test (the pin lets the page in, nothing else does) ran, and only over HTTPS
    pinned = re.search(r"^(\S+) over HTTPS the page is trusted only", run.stdout, re.M)
    assert pinned, run.stdout
    assert (pinned[1] == "✔") == (scheme == "https"), run.stdout
    assert_screenshots(shots, artifacts)
