"""Wall throughput: whole hands dealt and drawn out (NewHand, Deal, then every remaining tile
as live draws), per second —

* domain only (HandWall: shuffle, deal, 91 draws; no store),
* through the repository on the memory, SQLite and PostgreSQL stores (one store transaction
  per draw; PostgreSQL in a throw-away database of the test server, when it answers),
* over gRPC on a loopback server (1 client, then 4 concurrent clients on separate hands),

plus the shuffle alone and the verifier, and a peer: rlcard's mahjong dealer (136 tiles, numpy
shuffle, 13 each, then every remaining tile popped; no flowers, no dice, no commitment, no
physical wall) over the same number of hands in ``.venv-bench``. Ratios show what each layer
costs."""

from __future__ import annotations

import os
import tempfile

from mahjong.common.v1 import common_pb2
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.logs import configure_logging
from infra.store import open_store
from services.wall.domain import shuffle
from services.wall.domain.record import HandWall
from services.wall.domain.verify import record_of, verify_record
from services.wall.server import SPEC
from services.wall.storage.repository import WallRepository
from tests.bench import (
    bench_seconds,
    bench_venv,
    concurrent_rate,
    postgres_url,
    rate,
    run_peer,
)
from tests.support.grpc_server import channel_to, serving

DRAWS = 144 - 53
# libpq options: commits not waiting for the WAL flush (the class of guarantee SQLite's WAL
# with synchronous=NORMAL gives: a crash may lose the last commits, never corrupts).
NO_SYNC_COMMIT = "options=-c%20synchronous_commit%3Doff"
TIMEOUT = 10

RLCARD_DEALER = r"""
import json, sys, time
import numpy as np
from rlcard.games.mahjong.dealer import MahjongDealer
from rlcard.games.mahjong.player import MahjongPlayer

cfg = json.load(open(sys.argv[1]))

def hand(seed):
    rng = np.random.RandomState(seed)
    dealer = MahjongDealer(rng)  # builds and shuffles the deck
    players = [MahjongPlayer(i, rng) for i in range(4)]
    for p in players:
        dealer.deal_cards(p, 13)
    i = 0
    while dealer.deck:  # draw the wall out
        players[i % 4].hand.append(dealer.deck.pop())
        i += 1
    assert sum(len(p.hand) for p in players) == 136

hand(0)
done, start = 0, time.perf_counter()
for seed in cfg["seeds"]:
    hand(seed)
    done += 1
    if time.perf_counter() - start > cfg["seconds"]:
        break
print(json.dumps({"hands": done, "seconds": time.perf_counter() - start}))
"""


def domain_hand() -> int:
    hand = HandWall.create("bench", shuffle.new_seed(), 0)
    hand.deal()
    for i in range(DRAWS):
        hand.draw(i % 4)
    return 1


def repository_hand(repo: WallRepository) -> int:
    hand = repo.new_hand(0)
    repo.deal(hand.hand_id)
    for i in range(DRAWS):
        repo.draw(hand.hand_id, i % 4)
    return 1


def grpc_hand(stub) -> int:
    hand = stub.NewHand(wall_pb2.NewHandRequest(dealer=common_pb2.SEAT_0), timeout=TIMEOUT)
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    for i in range(DRAWS):
        stub.Draw(wall_pb2.DrawRequest(hand_id=hand.hand_id, seat=1 + i % 4), timeout=TIMEOUT)
    return 1


def concurrent_grpc(server, clients: int) -> float:
    """Hands per second with ``clients`` threads, each on its own channel (mutual TLS, as the
    gateway) and hands."""

    def make_worker(i: int):
        stub = wall_pb2_grpc.WallServiceStub(channels[i])
        return lambda: grpc_hand(stub)

    channels = [channel_to(server, SPEC.name, "gateway") for _ in range(clients)]
    try:
        return concurrent_rate(make_worker, clients)
    finally:
        for channel in channels:
            channel.close()


def line(label: str, hands_per_s: float, calls_per_hand: int = 0) -> None:
    extra = f"   {hands_per_s * calls_per_hand:>9,.0f} calls/s" if calls_per_hand else ""
    print(f"  {label:<44} {hands_per_s:>9,.1f} hands/s{extra}", flush=True)


def main() -> int:
    configure_logging("warning")  # the servers' per-call logs would drown the figures
    print(f"hand = new wall, deal 53 tiles, {DRAWS} live draws ({2 + DRAWS} calls)")
    shuffles, _ = rate(lambda: (shuffle.shuffle_and_dice(shuffle.new_seed()), 1)[1])
    print(f"  {'shuffle + dice (HMAC-SHA256 stream)':<44} {shuffles:>9,.0f} walls/s")

    domain, _ = rate(domain_hand)
    line("domain (HandWall, no store)", domain, 2 + DRAWS)

    memory_store = open_store("memory://")
    memory, _ = rate(lambda: repository_hand(WallRepository(memory_store)))
    line("repository, memory store", memory, 2 + DRAWS)

    with tempfile.TemporaryDirectory() as tmp:
        sqlite_store = open_store(f"sqlite:///{os.path.join(tmp, 'bench.db')}")
        sqlite, _ = rate(lambda: repository_hand(WallRepository(sqlite_store)))
        sqlite_store.close()
    line("repository, SQLite store", sqlite, 2 + DRAWS)

    postgres = None
    with postgres_url() as url:
        if url is not None:
            pg_store = open_store(url)
            postgres, _ = rate(lambda: repository_hand(WallRepository(pg_store)))
            pg_store.close()
            line("repository, PostgreSQL store", postgres, 2 + DRAWS)
            pg_store = open_store(url + "?" + NO_SYNC_COMMIT)
            lazy, _ = rate(lambda: repository_hand(WallRepository(pg_store)))
            pg_store.close()
            line("repository, PostgreSQL, no commit wait", lazy, 2 + DRAWS)

    with serving(SPEC, store_url="memory://") as (server, channel):
        stub = wall_pb2_grpc.WallServiceStub(channel)
        over_grpc, _ = rate(lambda: grpc_hand(stub))
        line("gRPC loopback, memory store, 1 client", over_grpc, 2 + DRAWS)
        four = concurrent_grpc(server, 4)
        line("gRPC loopback, memory store, 4 clients", four, 2 + DRAWS)

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{os.path.join(tmp, 'bench.db')}"
        with serving(SPEC, store_url=url) as (server, channel):
            stub = wall_pb2_grpc.WallServiceStub(channel)
            grpc_sqlite, _ = rate(lambda: grpc_hand(stub))
            line("gRPC loopback, SQLite store, 1 client", grpc_sqlite, 2 + DRAWS)

    hand = HandWall.create("v", shuffle.new_seed(), 0)
    hand.deal()
    for i in range(DRAWS):
        hand.draw(i % 4)
    record = record_of(hand)
    verified, _ = rate(lambda: (verify_record(record).ok, 1)[1])
    print(f"  {'verify a whole revealed hand':<44} {verified:>9,.0f} records/s")

    peer = None
    python = bench_venv("rlcard", "rlcard")
    if python is not None:
        inputs = {"seeds": list(range(1, 1_000_000)), "seconds": bench_seconds()}
        out = run_peer(python, RLCARD_DEALER, inputs)
        if out:
            peer = out["hands"] / out["seconds"]
            line("peer: rlcard MahjongDealer (136 tiles)", peer)

    print("ratios")
    print(f"  domain / repository(memory)    {domain / memory:6.1f}x")
    print(f"  repository(memory) / SQLite    {memory / sqlite:6.1f}x")
    if postgres:
        print(f"  repository(memory) / PostgreSQL {memory / postgres:5.1f}x")
    print(f"  repository(memory) / gRPC      {memory / over_grpc:6.1f}x")
    print(f"  gRPC 4 clients / 1 client      {four / over_grpc:6.2f}x")
    print(f"  domain / gRPC                  {domain / over_grpc:6.1f}x")
    if peer:
        print(f"  domain / rlcard dealer         {domain / peer:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
