"""Identity and ledger benchmark: sign-ins, session checks and ledger transactions per second.

* Sign-ins with a warm JWKS cache (the test issuer's key set fetched once, before timing): the
  in-process facade on the memory store and on SQLite, first sign-ins (a new identity each:
  player record, welcome grant, session) and repeat sign-ins of one identity (a new session);
  then over gRPC to one real matchmaking process (SQLite, server TLS). ID tokens are made
  before the clock starts (the issuer's signing is not what is measured).
* Session checks: ``SessionVerifier.verify`` alone (the stateless check the gateway's hot path
  makes: signature, claims, expiry) and the full ``Sessions.check`` (that, then the session's
  record in the store).
* Ledger transactions: a settled hand (``record_hand``, silver legs only: today's path), an
  item purchase (``items.buy``: silver and item legs) and a hand that consumes a held 加倍卡
  (its hand legs plus the hold → house legs), side by side on the same store.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from mahjong.matchmaking.v1 import matchmaking_pb2 as mpb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mpb_grpc

from infra.logs import configure_logging
from infra.request_ids import with_request_ids
from infra.store import open_store
from services.matchmaking.domain.economy import double_cards, items, ledger
from services.matchmaking.domain.economy.ledger import HandReport, Leg
from tests.bench import ROOT, bench_seconds, rate
from tests.bench.ledger_side_by_side import funded_players, winning_hands
from tests.support.identity import id_token, sign_in, unique_subject
from tests.support.tls import as_player
from tests.unit.matchmaking.mm_fakes import make_service

FIRST = 300  # new identities per store (tokens made in advance)
FIRST_GRPC = 200
CHECKS = 200  # verifications per timed unit
DOUBLED = 1000  # 加倍卡 hands (each needs a hold written in advance)


def _timed(calls: list[Callable[[], object]]) -> float:
    """Calls per second of running each of ``calls`` once, in order."""
    t0 = time.perf_counter()
    for call in calls:
        call()
    return len(calls) / (time.perf_counter() - t0)


def _open(kind: str, tmp: Path):
    return open_store("memory://" if kind == "memory" else f"sqlite:///{tmp / 'identity.db'}")


def facade_figures(kind: str, tmp: Path) -> dict[str, float]:
    store = _open(kind, tmp)
    mm, _, _ = make_service(store)
    try:
        _, session = sign_in(mm, "warm")  # fetches the issuer's JWKS: the cache is warm after
        tokens = [id_token(f"p{i}", unique_subject(f"p{i}")) for i in range(FIRST)]
        first = _timed([lambda t=t: mm.sign_in(t, "player") for t in tokens])
        again = id_token("regular", "regular-subject")
        mm.sign_in(again, "regular")
        repeat, _ = rate(lambda: (mm.sign_in(again, "regular"), 1)[1])
        check, _ = rate(lambda: [mm.sessions.check(session) for _ in range(CHECKS)] and CHECKS)
        verifier, clock = mm.sessions.verifier, mm.sessions.clock
        verify, _ = rate(
            lambda: [verifier.verify(session, clock()) for _ in range(CHECKS)] and CHECKS
        )
        return {"first": first, "repeat": repeat, "check": check, "verify": verify}
    finally:
        store.close()


def grpc_figures(tmp: Path) -> dict[str, float]:
    from tests.support.stacks import service_process

    args = ["--gateway-addr", "127.0.0.1:1", "--log-level", "warning", "--drain-seconds", "0"]
    args += ["--flood-address-rate", "0", "--flood-player-rate", "0"]
    url = f"sqlite:///{tmp / 'grpc.db'}"
    proc = service_process("matchmaking", tmp, store_url=url, extra=args).start()
    try:
        proc.wait_ready(60)
        channel = with_request_ids(as_player(proc.address))
        stub = mpb_grpc.MatchmakingServiceStub(channel)
        sign_in(stub, "warm")

        def req(token: str) -> mpb.SignInRequest:
            return mpb.SignInRequest(
                id_token=token, display_name="player", request_id=uuid.uuid4().hex
            )

        firsts = [req(id_token(f"g{i}", unique_subject(f"g{i}"))) for i in range(FIRST_GRPC)]
        first = _timed([lambda r=r: stub.SignIn(r, timeout=10) for r in firsts])
        again = id_token("regular", "regular-subject")
        stub.SignIn(req(again), timeout=10)
        repeat, _ = rate(lambda: (stub.SignIn(req(again), timeout=10), 1)[1])
        channel.close()
        return {"first": first, "repeat": repeat}
    finally:
        proc.stop()


def ledger_figures(kind: str, tmp: Path) -> dict[str, float]:
    store = _open(kind, tmp)
    try:
        players = funded_players(store)
        hand = winning_hands(store, players)

        buys = itertools.count()
        prices = items.ItemPrices()

        def buy() -> int:
            n = next(buys)
            items.buy(store, prices, players[n % 4], ledger.DOUBLE_CARD, 1, f"b-{n}", 2.0)
            return 1

        hand_rate, _ = rate(hand)
        buy_rate, _ = rate(buy)
        # 加倍卡 hands: seat 0 holds a card for each hand (written before timing)
        items.buy(store, prices, players[0], ledger.DOUBLE_CARD, DOUBLED, "cards", 2.0)
        reports = []
        for n in range(1, DOUBLED + 1):
            account = double_cards.hold_account("bench-d", n, players[0])
            held = ledger.DOUBLE_CARD_HELD
            legs = [
                Leg(players[0], ledger.DOUBLE_CARD, -1, held, "held"),
                Leg(account, ledger.DOUBLE_CARD, 1, held, "held"),
            ]
            ledger.transact(store, f"hold-{n}", legs, 2.0)
            pay = (3, -1, -1, -1) if n % 2 else (-3, 1, 1, 1)
            report = HandReport(
                f"d-{n}", "bench-d", "quick/bench", players, pay, hand_number=n, doubled_seats=(0,)
            )
            reports.append(report)
        doubled = _timed(
            [
                lambda r=r: ledger.record_hand(store, r, 3.0, double_cards.consume_legs(r))
                for r in reports
            ]
        )
        assert ledger.balance(store, players[0], ledger.DOUBLE_CARD) > 0
        assert ledger.reconcile(store) == []
        return {"hand": hand_rate, "buy": buy_rate, "doubled": doubled}
    finally:
        store.close()


# The ledger before items: silver only, no asset legs (issue 21 measured ledger speed "with
# items, side by side with today's", the ledger of this commit).
BEFORE_ITEMS = "c7055cb"
PAIRS = 3  # old and new runs alternate this many times; each side keeps its best


def ledger_side_by_side(tmp: Path) -> dict[str, tuple[float, float]] | None:
    """Settled hands per second of this tree's ledger and of :data:`BEFORE_ITEMS`', each run
    in its own process (tests/bench/ledger_side_by_side.py), alternating; None when this
    clone lacks that commit."""
    old = tmp / "before-items"
    old.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", BEFORE_ITEMS, "shared", "services"],
        capture_output=True,
    )
    if archive.returncode != 0:
        print(f"  side by side: this clone has no commit {BEFORE_ITEMS} (a shallow clone?)")
        return None
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    script = str(Path(__file__).with_name("ledger_side_by_side.py"))
    best: dict[str, tuple[float, float]] = {}
    for kind in ("memory", "sqlite"):
        rates: dict[Path, float] = {ROOT: 0.0, old: 0.0}
        for n in range(PAIRS):
            for tree in (ROOT, old):
                d = tmp / f"side-{kind}-{tree.name}-{n}"
                d.mkdir()
                done = subprocess.run(
                    [sys.executable, script, kind, str(d), str(bench_seconds())],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "PYTHONPATH": str(tree), "MAHJONG_PURE_PYTHON": "1"},
                    check=True,
                )
                got = json.loads(done.stdout.strip().splitlines()[-1])["hand"]
                rates[tree] = max(rates[tree], got)
        best[kind] = (rates[ROOT], rates[old])
    return best


def main(argv: list[str] | None = None) -> int:
    configure_logging("warning")
    print("identity: sign-ins with a warm JWKS cache (ES256 ID tokens of the test issuer)")
    signs, ledgers = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("memory", "sqlite"):
            (Path(tmp) / kind).mkdir()
            signs[kind] = facade_figures(kind, Path(tmp) / kind)
        for kind, r in signs.items():
            print(
                f"  facade {kind:<6}  first sign-in {r['first']:>8,.0f}/s   "
                f"repeat sign-in {r['repeat']:>8,.0f}/s   "
                f"(first/repeat {r['first'] / r['repeat']:.2f}x)"
            )
        (Path(tmp) / "grpc").mkdir()
        g = grpc_figures(Path(tmp) / "grpc")
        print(
            f"  gRPC 1 process (sqlite, TLS, 1 client)  first {g['first']:>6,.0f}/s   "
            f"repeat {g['repeat']:>6,.0f}/s   (facade sqlite repeat / gRPC repeat "
            f"{signs['sqlite']['repeat'] / g['repeat']:.1f}x)"
        )
        print("session tokens (Ed25519 JWT): checks per second")
        verify = max(r["verify"] for r in signs.values())
        print(f"  SessionVerifier.verify (stateless, gateway hot path) {verify:>10,.0f}/s")
        for kind, r in signs.items():
            print(
                f"  Sessions.check {kind:<6} (signature + store record) {r['check']:>10,.0f}/s"
                f"   (verify / check {verify / r['check']:.2f}x)"
            )
        print("ledger: transactions per second (accounts funded first)")
        for kind in ("memory", "sqlite"):
            (Path(tmp) / f"ledger-{kind}").mkdir()
            ledgers[kind] = ledger_figures(kind, Path(tmp) / f"ledger-{kind}")
        for kind, r in ledgers.items():
            print(
                f"  {kind:<6} hand (silver) {r['hand']:>8,.0f}/s   item buy {r['buy']:>8,.0f}/s   "
                f"加倍卡 hand {r['doubled']:>8,.0f}/s   items/hands {r['buy'] / r['hand']:.2f}x   "
                f"加倍卡 hand/hand {r['doubled'] / r['hand']:.2f}x"
            )
        print(
            f"ledger side by side with the ledger before items ({BEFORE_ITEMS}): settled hands "
            f"per second, one process each, {PAIRS} alternating runs, best of each"
        )
        side = ledger_side_by_side(Path(tmp))
        for kind, (now, before) in (side or {}).items():
            print(
                f"  {kind:<6} asset ledger {now:>8,.0f}/s   before items {before:>8,.0f}/s   "
                f"(now/before {now / before:.2f}x)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
