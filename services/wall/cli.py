"""``mahjong`` subcommands of the wall service.

* ``mahjong verify-wall RECORD.json`` — verify a revealed hand (see
  :mod:`services.wall.domain.verify`); ``-`` reads standard input. Exit status 0 when it
  verifies, 1 when it does not, 2 when the record is unreadable.
* ``mahjong wall show --seed HEX [--dealer N]`` — the wall a seed gives, offline: commitment,
  dice, opened wall, break stack, the deal and the ring of stacks.
* ``mahjong wall new|deal|draw|replacement|remaining|swap|reveal`` — call a running wall service
  (``--addr``, default ``MAHJONG_WALL_ADDR`` or 127.0.0.1:50051). ``reveal`` prints the
  verification record, so ``mahjong wall reveal H > r.json && mahjong verify-wall r.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from infra.addresses import default_address
from infra.tls import TLSConfigError, TLSFiles, dial, env_insecure, operator_tls_dir
from services.wall.domain.events import DEAL, DRAW, INDICATOR, REPLACEMENT, SWAP
from services.wall.domain.record import HandWall
from services.wall.domain.verify import RecordError, verify_record
from services.wall.domain.wall import opened_seat, seat_wall_start
from shared import tiles as T
from shared.ruleset import RulesetError, resolve_ruleset
from shared.tile_set import tile_set_of

_KIND_LABELS = {1: DEAL, 2: DRAW, 3: REPLACEMENT, 4: SWAP, 5: INDICATOR}
TIMEOUT = 10.0


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("verify-wall", help="verify a revealed hand's wall from its seed")
    v.add_argument("record", help="JSON record file (mahjong wall reveal prints one); - = stdin")
    v.set_defaults(func=_verify)

    w = sub.add_parser("wall", help="inspect walls offline or call the wall service")
    ws = w.add_subparsers(dest="wall_command", required=True, metavar="ACTION")
    show = ws.add_parser("show", help="the wall a seed gives (offline)")
    show.add_argument("--seed", required=True, help="64 hex digits")
    show.add_argument("--dealer", type=int, default=0, choices=range(4))
    show.add_argument(
        "--ruleset", default="", help="preset whose tile set is shuffled (shanghai-baida: 152)"
    )
    show.set_defaults(func=_show)

    def remote(name: str, help_: str, fn, *, hand: bool = True, seat: bool = False):
        p = ws.add_parser(name, help=help_)
        p.add_argument("--addr", default=default_address("wall"), help="wall service address")
        p.add_argument(
            "--tls-dir",
            default=operator_tls_dir(),
            help="the operator's certificate (tls.crt, tls.key, ca.crt; default "
            "MAHJONG_OPERATOR_TLS_DIR or .data/tls/operator, made by `mahjong certs`)",
        )
        if hand:
            p.add_argument("hand_id")
        if seat:
            p.add_argument("--seat", type=int, required=True, choices=range(4))
            p.add_argument("--request-id", default="")
        p.set_defaults(func=_remote(fn))
        return p

    new = remote("new", "start a hand; prints hand id, dice, commitment", _new, hand=False)
    new.add_argument("--dealer", type=int, default=0, choices=range(4))
    new.add_argument("--ruleset", default="", help="preset name (default shanghai-qiaoma)")
    new.add_argument("--option", action="append", default=[], help="section.option=value")
    new.add_argument("--seed", default="", help="fixed seed (server needs --allow-fixed-seed)")
    new.add_argument("--request-id", default="")
    remote("deal", "deal the starting hands", _deal)
    remote("draw", "a live draw", _draw, seat=True)
    remote("replacement", "a replacement draw", _replacement, seat=True)
    remote("remaining", "tiles left", _remaining)
    remote("flip", "翻百搭: turn the 百搭 indicator (flipped wildcards only)", _flip)
    swap = remote("swap", "换牌: bury tiles, take as many from the wall", _swap, seat=True)
    swap.add_argument("buried", help="mpsz, e.g. 19m5p4z7z")
    remote("reveal", "end the hand; print its verification record", _reveal)


# --- offline ---------------------------------------------------------------------------------
def _verify(args: argparse.Namespace) -> int:
    try:
        if args.record == "-":
            record = json.load(sys.stdin)
        else:
            with open(args.record, encoding="utf-8") as fh:
                record = json.load(fh)
        result = verify_record(record)
    except (OSError, json.JSONDecodeError, RecordError) as exc:
        print(f"verify-wall: cannot read the record: {exc}", file=sys.stderr)
        return 2
    print(result.summary())
    return 0 if result.ok else 1


def _show(args: argparse.Namespace) -> int:
    try:
        seed = bytes.fromhex(args.seed)
        tile_set = tile_set_of(resolve_ruleset(args.ruleset))
        hand = HandWall.create("show", seed, args.dealer, tile_set=tile_set)
    except RulesetError as exc:
        print(f"wall show: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"wall show: bad seed: {exc}", file=sys.stderr)
        return 2
    wall = hand.wall
    tiles = list(wall.tiles)
    print(f"commitment  {hand.commitment.hex()}")
    print(f"dice        {hand.dice[0]} + {hand.dice[1]} = {sum(hand.dice)}")
    print(f"opened      wall of seat {opened_seat(hand.dealer, hand.dice)}")
    print(f"break stack {wall.start} (replacements from stack {(wall.start - 1) % wall.stacks})")
    for seat, held in enumerate(hand.deal()):
        mark = " (dealer)" if seat == hand.dealer else ""
        print(f"seat {seat}{mark:<9} {T.format_tiles(held)}")
    print(f"stacks (top over bottom), {wall.stacks} in all, in front of each seat:")
    for seat in range(4):
        stacks = range(seat_wall_start(seat, wall.stacks), seat_wall_start(seat + 1, wall.stacks))
        print(f"  seat {seat} top    " + " ".join(T.format_tile(tiles[2 * s]) for s in stacks))
        print("         bottom " + " ".join(T.format_tile(tiles[2 * s + 1]) for s in stacks))
    return 0


# --- over gRPC -------------------------------------------------------------------------------
class _CallFailed(Exception):
    """A call the server refused; the status was printed."""


def _remote(fn):
    """A remote subcommand: exit status 1 when the server refuses the call."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except _CallFailed:
            return 1

    return run


def _call(args: argparse.Namespace, method: str, request) -> Any:
    import grpc
    from mahjong.wall.v1 import wall_pb2_grpc

    files = None if env_insecure() else TLSFiles(Path(args.tls_dir))
    try:
        channel = dial(args.addr, "wall", files)
    except TLSConfigError as exc:
        print(f"wall {method}: {exc}", file=sys.stderr)
        raise _CallFailed from None
    with channel:
        stub = wall_pb2_grpc.WallServiceStub(channel)
        try:
            return getattr(stub, method)(request, timeout=TIMEOUT)
        except grpc.RpcError as exc:
            print(f"wall {method}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            raise _CallFailed from None


def _print(obj: dict) -> int:
    print(json.dumps(obj, ensure_ascii=False, indent=2))
    return 0


def _counts(pb) -> dict:
    return {
        "remaining": pb.remaining,
        "drawable": pb.drawable,
        "reserved": pb.reserved,
        "live_drawn": pb.live_drawn,
        "replacements_drawn": pb.replacements_drawn,
    }


def _mpsz(values) -> str:
    from infra.convert.common import tiles_from_proto

    return T.format_tiles(tiles_from_proto(values), sort=False)


def _new(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    from infra.convert.common import ruleset_to_ref, seat_to_proto

    bad = [o for o in args.option if "=" not in o]
    if bad:
        print(f"wall new: --option {bad[0]!r} is not section.option=value", file=sys.stderr)
        return 2
    try:
        seed = bytes.fromhex(args.seed)
    except ValueError:
        print(f"wall new: --seed {args.seed!r} is not hex", file=sys.stderr)
        return 2
    req = wall_pb2.NewHandRequest(
        request_id=args.request_id,
        ruleset=ruleset_to_ref(args.ruleset, dict(o.split("=", 1) for o in args.option)),
        dealer=seat_to_proto(args.dealer),
        seed=seed,
    )
    r = _call(args, "NewHand", req)
    return _print(
        {
            "hand_id": r.hand_id,
            "dice": [r.dice.first, r.dice.second],
            "commitment": r.commitment.hex(),
            "opened_seat": r.layout.opened_seat - 1,
            "break_stack": r.layout.break_stack,
        }
    )


def _deal(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    r = _call(args, "Deal", wall_pb2.DealRequest(hand_id=args.hand_id))
    return _print(
        {
            "hands": [_mpsz(h.tiles) for h in r.hands],
            "flowers": [_mpsz(h.flowers) for h in r.hands],
            "counts": _counts(r.counts),
        }
    )


def _draw_like(args: argparse.Namespace, method: str, request_type: str) -> int:
    from mahjong.wall.v1 import wall_pb2

    from infra.convert.common import seat_to_proto

    req = getattr(wall_pb2, request_type)(
        hand_id=args.hand_id, seat=seat_to_proto(args.seat), request_id=args.request_id
    )
    r = _call(args, method, req)
    return _print({"tile": _mpsz([r.tile]), "sequence": r.sequence, "counts": _counts(r.counts)})


def _draw(args: argparse.Namespace) -> int:
    return _draw_like(args, "Draw", "DrawRequest")


def _replacement(args: argparse.Namespace) -> int:
    return _draw_like(args, "DrawReplacement", "DrawReplacementRequest")


def _remaining(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    r = _call(args, "Remaining", wall_pb2.RemainingRequest(hand_id=args.hand_id))
    return _print({"revealed": r.revealed, **_counts(r.counts)})


def _flip(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    req = wall_pb2.FlipIndicatorRequest(hand_id=args.hand_id)
    r = _call(args, "FlipIndicator", req)
    return _print(
        {
            "indicator": _mpsz([r.indicator]),
            "wild": _mpsz([r.wild]),
            "setAside": _mpsz(r.set_aside),
            "sequence": r.sequence,
            **_counts(r.counts),
        }
    )


def _swap(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    from infra.convert.common import seat_to_proto, tiles_to_proto

    try:
        buried = T.parse(args.buried)
    except T.NotationError as exc:
        print(f"wall swap: {exc}", file=sys.stderr)
        return 2
    req = wall_pb2.SwapTilesRequest(
        hand_id=args.hand_id,
        seat=seat_to_proto(args.seat),
        buried=tiles_to_proto(buried),
        request_id=args.request_id,
    )
    r = _call(args, "SwapTiles", req)
    return _print({"taken": _mpsz(r.taken), "sequence": r.sequence, "counts": _counts(r.counts)})


def record_from_reveal(hand_id: str, r) -> dict[str, Any]:
    """A ``RevealResponse`` as the verifier's JSON record (:mod:`services.wall.domain.verify`)."""
    events = []
    for e in r.events:
        event = {
            "sequence": e.sequence,
            "kind": _KIND_LABELS[e.kind],
            "seat": e.seat - 1,
            "tiles": _mpsz(e.tiles),
        }
        if e.kind == 4:
            event["buried"] = _mpsz(e.buried)
        events.append(event)
    return {
        "hand_id": hand_id,
        "seed": r.seed.hex(),
        "commitment": r.commitment.hex(),
        "dealer": r.dealer - 1,
        "dice": [r.dice.first, r.dice.second],
        "reserved_tiles": r.reserved_tiles,
        "tile_swap_count": r.tile_swap_count,
        **({"tile_set": facts} if any((facts := _tile_set_facts(r.tile_set)).values()) else {}),
        "events": events,
    }


def _tile_set_facts(pb) -> dict[str, bool]:
    return {f.name: getattr(pb, f.name) for f in pb.DESCRIPTOR.fields}


def _reveal(args: argparse.Namespace) -> int:
    from mahjong.wall.v1 import wall_pb2

    r = _call(args, "Reveal", wall_pb2.RevealRequest(hand_id=args.hand_id))
    return _print(record_from_reveal(args.hand_id, r))
