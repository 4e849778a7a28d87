"""Full-speed agent benchmark (issue 30, item 3): a protos-only client (tests/e2e/full_speed.py)
answers every prompt of its seat at once against three server bots that think for 0 ms, over
200 hands, under the gateway's default flood control (20 calls a second, bursts of 40): on one
gateway with the memory store, and on two gateways on PostgreSQL (``MAHJONG_TEST_POSTGRES_URL``;
skipped if unreachable) with every call sent to the replica that does not run the table. Prints
hands, answers, answers per second and refusals by code; fails on any refusal.

``MAHJONG_BENCH_HANDS`` (default 200) sets the hands."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.supervisor import ServiceProcess, stop_all
from tests.e2e.full_speed import AgentRun, one_bot_table, play_at_full_speed
from tests.e2e.test_full_speed_agent import gateway_flags
from tests.support import postgres
from tests.support.stacks import service_process, start_services
from tests.support.tls import as_player


def _report(what: str, run: AgentRun, hands: int) -> bool:
    rate = run.answers / run.seconds if run.seconds else 0.0
    print(
        f"{what}: {run.hands}/{hands} hands, {run.answers} answers in {run.seconds:.1f} s "
        f"({rate:.0f} answers/s, {run.seconds / max(1, run.hands) * 1000:.0f} ms/hand), "
        f"refused: {dict(run.refusals) or 'none'}",
        flush=True,
    )
    return run.finished and run.hands == hands and not run.refusals


def _play(entry: ServiceProcess, owner: ServiceProcess, hands: int) -> AgentRun:
    channels = [as_player(owner.address), as_player(entry.address)]
    try:
        on_owner, on_entry = (gateway_pb2_grpc.GatewayServiceStub(c) for c in channels)
        t = one_bot_table(on_owner, hands)
        return play_at_full_speed(on_entry, t.table_id, t.seat_tokens[0], timeout=1800)
    finally:
        for c in channels:
            c.close()


def main() -> int:
    hands = int(os.environ.get("MAHJONG_BENCH_HANDS", "200"))
    ok = True
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        procs: dict[str, ServiceProcess] = {}
        try:
            start_services(procs, tmp, ("wall", "rules", "scoring"))
            for p in procs.values():
                p.wait_ready()
            solo = service_process("gateway", tmp, extra=gateway_flags(procs, "solo")).start()
            try:
                solo.wait_ready()
                ok &= _report("1 gateway, memory store", _play(solo, solo, hands), hands)
            finally:
                solo.stop()
            url = postgres.server_url()
            why = postgres.probe(url)
            if why is not None:
                print(f"2 gateways on PostgreSQL: skipped ({why})")
                return 0 if ok else 1
            db = postgres.TestDatabase(url)
            try:
                with db.schema() as store:
                    a, b = (
                        service_process(
                            "gateway",
                            tmp,
                            store_url=store,
                            extra=gateway_flags(procs, n),
                            log_name=n,
                        ).start()
                        for n in ("pg-a", "pg-b")
                    )
                    try:
                        a.wait_ready()
                        b.wait_ready()
                        run = _play(b, a, hands)
                        ok &= _report("2 gateways on PostgreSQL, via the non-owner", run, hands)
                    finally:
                        stop_all([b, a])
            finally:
                db.drop()
        finally:
            stop_all(reversed(list(procs.values())))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
