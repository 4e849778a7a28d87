"""``mahjong integrity pairs``: an operator's view of the collusion signals (ListSuspiciousPairs
with the operator's certificate, on matchmaking's internal port): the ordered pairs of players
ranked by how unlikely their record together is by chance, with the evidence for each.
Registered by :func:`services.matchmaking.cli.register`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.addresses import default_internal_address
from infra.tls import TLSConfigError, TLSFiles, dial, env_insecure, operator_tls_dir

TIMEOUT = 30.0
SIGNALS = {
    pb.COLLUSION_SIGNAL_WINS_OFF_DISCARD: "wins",
    pb.COLLUSION_SIGNAL_CLAIMS: "claims",
    pb.COLLUSION_SIGNAL_PASSED_WINS: "passed",
    pb.COLLUSION_SIGNAL_QUEUED_TOGETHER: "queued",
    pb.COLLUSION_SIGNAL_CHOWS: "chows",
}


def format_page(page: pb.ListSuspiciousPairsResponse, first_rank: int = 1) -> list[str]:
    """One line per pair: rank, score, the pair, hands together, and each signal as
    ``observed/expected (z)``; a ``!`` marks a score above the threshold."""
    lines = [f"{page.total_pairs} pairs ranked; threshold {page.threshold:.1f}"]
    for rank, p in enumerate(page.pairs, first_rank):
        signals = "  ".join(
            f"{SIGNALS.get(e.signal, e.signal)} {e.observed}/{e.expected:.2f} ({e.z:+.1f})"
            for e in p.evidence
        )
        mark = "!" if p.suspicious else " "
        lines.append(
            f"{rank:>4}{mark} {p.score:6.2f}  {p.player_id} -> {p.partner_id}  "
            f"hands {p.hands_together}  {signals}"
        )
    if page.next_page_token:
        lines.append(f"next page: --page-token {page.next_page_token}")
    return lines


def _pairs(args: argparse.Namespace) -> int:
    files = None if env_insecure() else TLSFiles(Path(args.tls_dir))
    try:
        channel = dial(args.matchmaking_addr, "matchmaking", files)
    except TLSConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    request = pb.ListSuspiciousPairsRequest(
        limit=args.limit, page_token=args.page_token, only_suspicious=args.only_suspicious
    )
    with channel:
        try:
            page = pb_grpc.MatchmakingServiceStub(channel).ListSuspiciousPairs(
                request, timeout=TIMEOUT
            )
        except grpc.RpcError as exc:
            print(f"error: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    if args.json:
        from google.protobuf import json_format

        print(json_format.MessageToJson(page, indent=None), flush=True)
    else:
        print("\n".join(format_page(page)), flush=True)
    return 0


def register(subparsers, operator_tls_help: str) -> None:
    p = subparsers.add_parser("integrity", help="operator: fair play (collusion signals)")
    sub = p.add_subparsers(dest="integrity_command", required=True)
    pairs = sub.add_parser(
        "pairs", help="operator: pairs of players ranked by how unlikely their record is"
    )
    pairs.add_argument("--limit", type=int, default=20, help="pairs per page (0-500, 0 = 50)")
    pairs.add_argument("--page-token", default="", help="the previous page's next page token")
    pairs.add_argument(
        "--only-suspicious", action="store_true", help="only the pairs above the threshold"
    )
    pairs.add_argument("--json", action="store_true", help="print the response as JSON")
    pairs.add_argument("--tls-dir", default=operator_tls_dir(), help=operator_tls_help)
    pairs.add_argument("--matchmaking-addr", default=default_internal_address("matchmaking"))
    pairs.set_defaults(func=_pairs)
