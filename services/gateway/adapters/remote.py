"""gRPC adapters: the engine's ports answered by the wall, rules and scoring services.

Every call carries a deadline (``timeout``) and is retried a few times on UNAVAILABLE or
DEADLINE_EXCEEDED; wall draws carry a request id (the hand id and the draw's number, which
the engine keeps) so a retried draw, here or by the engine, returns the same tile. Hop
budget: one wall call per draw, one rules call per decision point (claim options of every seat
in one call), and the engine checks actions against options it already holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import grpc
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc
from mahjong.scoring.v1 import scoring_pb2, scoring_pb2_grpc
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.convert import common as C
from infra.tls import TLSFiles, dial
from services.gateway.adapters.inprocess import context_of, facts_context, win_input_of
from services.gateway.domain.ports import (
    BreakdownItem,
    CallCounter,
    HandFacts,
    Settlement,
    WallDraw,
    WallFenced,
    WallHand,
    WallReveal,
    WinnerResult,
    flip_call_id,
    wall_call_id,
)
from services.rules import convert as RC
from services.scoring import convert as SC
from shared.errors import ResourceExhausted, Unavailable
from shared.table import Action, ClaimOptions, ClaimResolution, OwnTurnOptions, TableSnapshot

T = TypeVar("T")
# CANCELLED: a server stopping (a rolling update's SIGTERM) cancels the calls still running
# past its grace; every call here is safe to make again (the wall's are numbered, rules and
# scoring answer from their request alone).
RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
)
# Transport failures the engine retries (services.gateway.domain.ports.is_transient).
TRANSIENT = (*RETRYABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)


def call(fn: Callable[..., T], request, timeout: float, attempts: int = 3) -> T:
    """One unary call with a deadline, retried on UNAVAILABLE / DEADLINE_EXCEEDED / CANCELLED.
    A transport failure that outlasts the retries is raised as Unavailable (ResourceExhausted
    when the service is overloaded), which the engine retries later; any other error as it
    came."""
    for attempt in range(attempts):
        try:
            return fn(request, timeout=timeout)
        except grpc.RpcError as exc:
            code = exc.code()
            if attempt + 1 < attempts and code in RETRYABLE:
                time.sleep(0.05 * (attempt + 1))
                continue
            if code in TRANSIENT:
                method = getattr(fn, "_method", b"")
                name = method.decode() if isinstance(method, bytes) else str(method)
                cls = (
                    ResourceExhausted if code == grpc.StatusCode.RESOURCE_EXHAUSTED else Unavailable
                )
                raise cls(
                    f"{name or 'service call'} failed: {code.name} {exc.details()}",
                    reason="SERVICE_UNAVAILABLE",
                    grpc_code=code.name,
                ) from exc
            raise
    raise AssertionError("unreachable")


def channel(address: str, workload: str, tls: TLSFiles | None) -> grpc.Channel:
    """A channel to the ``workload`` service at ``address``, mutual TLS with the gateway's
    certificate ``tls`` (None: plaintext, tests of that path), with client-side round robin
    (headless Services resolve to every pod)."""
    return dial(address, workload, tls, options=[("grpc.lb_policy_name", "round_robin")])


class RemoteWall:
    def __init__(self, ch: grpc.Channel, timeout: float = 2.0, counter: CallCounter | None = None):
        self.stub = wall_pb2_grpc.WallServiceStub(ch)
        self.timeout = timeout
        self.counter = counter or CallCounter()

    def new_hand(
        self, ruleset_name: str, overrides: Mapping[str, str], dealer: int, request_id: str
    ) -> WallHand:
        self.counter.wall += 1
        resp = call(
            self.stub.NewHand,
            wall_pb2.NewHandRequest(
                request_id=request_id,
                ruleset=C.ruleset_to_ref(ruleset_name, dict(overrides)),
                dealer=C.seat_to_proto(dealer),
            ),
            self.timeout,
        )
        return WallHand(
            resp.hand_id,
            (resp.dice.first, resp.dice.second),
            resp.commitment.hex(),
            resp.counts.remaining,
        )

    def deal(self, hand_id: str) -> tuple[list[list[int]], int]:
        self.counter.wall += 1
        resp = call(self.stub.Deal, wall_pb2.DealRequest(hand_id=hand_id), self.timeout)
        hands = [[] for _ in range(4)]
        for h in resp.hands:
            hands[C.seat_from_proto(h.seat)] = [C.tile_from_proto(t) for t in h.tiles]
        return hands, resp.counts.remaining

    def _fenced_call(self, fn: Callable[..., T], request) -> T:
        """``call``, with the wall's ABORTED (a fenced call under a stale owner epoch, the
        only ABORTED it answers) raised as WallFenced."""
        try:
            return call(fn, request, self.timeout)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.ABORTED:
                raise WallFenced(exc.details() or "stale owner epoch") from exc
            raise

    def draw(self, hand_id: str, seat: int, number: int, *, epoch: int = 0) -> WallDraw:
        self.counter.wall += 1
        resp = self._fenced_call(
            self.stub.Draw,
            wall_pb2.DrawRequest(
                hand_id=hand_id,
                seat=C.seat_to_proto(seat),
                request_id=wall_call_id(hand_id, number),
                owner_epoch=epoch,
            ),
        )
        return WallDraw(C.tile_from_proto(resp.tile), resp.counts.remaining)

    def flip_indicator(self, hand_id: str, *, epoch: int = 0) -> tuple[list[int], int]:
        self.counter.wall += 1
        resp = self._fenced_call(
            self.stub.FlipIndicator,
            wall_pb2.FlipIndicatorRequest(
                hand_id=hand_id, request_id=flip_call_id(hand_id), owner_epoch=epoch
            ),
        )
        turned = [*C.tiles_from_proto(resp.set_aside), C.tile_from_proto(resp.indicator)]
        return turned, resp.counts.remaining

    def draw_replacement(self, hand_id: str, seat: int, number: int, *, epoch: int = 0) -> WallDraw:
        self.counter.wall += 1
        resp = self._fenced_call(
            self.stub.DrawReplacement,
            wall_pb2.DrawReplacementRequest(
                hand_id=hand_id,
                seat=C.seat_to_proto(seat),
                request_id=wall_call_id(hand_id, number),
                owner_epoch=epoch,
            ),
        )
        return WallDraw(C.tile_from_proto(resp.tile), resp.counts.remaining)

    def swap(
        self, hand_id: str, seat: int, buried: list[int], number: int, *, epoch: int = 0
    ) -> list[int]:
        self.counter.wall += 1
        resp = self._fenced_call(
            self.stub.SwapTiles,
            wall_pb2.SwapTilesRequest(
                hand_id=hand_id,
                seat=C.seat_to_proto(seat),
                buried=C.tiles_to_proto(buried),
                request_id=wall_call_id(hand_id, number),
                owner_epoch=epoch,
            ),
        )
        return [C.tile_from_proto(t) for t in resp.taken]

    def reveal(self, hand_id: str, number: int = 0, *, epoch: int = 0) -> WallReveal:
        self.counter.wall += 1
        resp = self._fenced_call(
            self.stub.Reveal,
            wall_pb2.RevealRequest(
                hand_id=hand_id,
                owner_epoch=epoch,
                next_request_id=wall_call_id(hand_id, number) if number else "",
            ),
        )
        return WallReveal(resp.seed.hex(), resp.commitment.hex())


class RemoteRules:
    def __init__(self, ch: grpc.Channel, timeout: float = 2.0, counter: CallCounter | None = None):
        self.stub = rules_pb2_grpc.RulesServiceStub(ch)
        self.timeout = timeout
        self.counter = counter or CallCounter()

    @staticmethod
    def _snap(snapshot: TableSnapshot):
        # The RulesetRef is derived from the snapshot's ruleset (ruleset_ref_of, cached).
        return RC.snapshot_to_proto(snapshot)

    def own_turn_options(self, snapshot: TableSnapshot, seat: int) -> OwnTurnOptions:
        self.counter.rules += 1
        resp = call(
            self.stub.GetOwnTurnOptions,
            rules_pb2.GetOwnTurnOptionsRequest(
                table=self._snap(snapshot), seat=C.seat_to_proto(seat)
            ),
            self.timeout,
        )
        return RC.own_turn_options_from_proto(resp.options)

    def claim_options(self, snapshot: TableSnapshot) -> dict[int, ClaimOptions]:
        self.counter.rules += 1
        resp = call(
            self.stub.GetClaimOptions,
            rules_pb2.GetClaimOptionsRequest(table=self._snap(snapshot)),
            self.timeout,
        )
        out = {}
        for o in resp.options:
            opt = RC.claim_options_from_proto(o)
            out[opt.seat] = opt
        return out

    def resolve_claims(
        self, snapshot: TableSnapshot, claims: Mapping[int, Action]
    ) -> ClaimResolution:
        self.counter.rules += 1
        resp = call(
            self.stub.ResolveClaims,
            rules_pb2.ResolveClaimsRequest(
                table=self._snap(snapshot), claims=RC.claims_to_proto(claims)
            ),
            self.timeout,
        )
        return RC.resolution_from_proto(resp)


def settlement_from_proto(pb: scoring_pb2.Settlement) -> Settlement:
    return Settlement(
        payments=tuple(pb.payments),  # type: ignore[arg-type]
        house=pb.house,
        winners=tuple(
            WinnerResult(C.seat_from_proto(w.seat), int(w.hand), w.flowers, w.value)
            for w in pb.winners
        ),
        next_dealer=C.seat_from_proto(pb.next_dealer),
        next_huangfan=pb.next_huangfan,
        breakdown=tuple(
            BreakdownItem(
                C.seat_from_proto_optional(b.seat),
                b.code,
                f"{b.label_zh} {b.label}" + (f": {b.detail}" if b.detail else ""),
                b.amount,
                C.seat_from_proto_optional(b.other_seat),
            )
            for b in pb.breakdown
        ),
    )


class RemoteScoring:
    def __init__(self, ch: grpc.Channel, timeout: float = 2.0, counter: CallCounter | None = None):
        self.stub = scoring_pb2_grpc.ScoringServiceStub(ch)
        self.timeout = timeout
        self.counter = counter or CallCounter()

    def settle_win(self, facts: HandFacts) -> Settlement:
        self.counter.scoring += 1
        req = SC.win_input_to_proto(win_input_of(facts), facts.ruleset_name, dict(facts.overrides))
        resp = call(self.stub.SettleWin, req, self.timeout)
        return settlement_from_proto(resp.settlement)

    def settle_draw(self, facts: HandFacts) -> Settlement:
        self.counter.scoring += 1
        ctx = facts_context(facts)
        req = scoring_pb2.SettleDrawRequest(
            context=SC.context_to_proto(ctx, facts.ruleset_name, dict(facts.overrides))
        )
        return settlement_from_proto(call(self.stub.SettleDraw, req, self.timeout).settlement)

    def settle_escape(
        self, ruleset_name, overrides, stake, seat, dealer, huangfan, garden_stacks=None
    ) -> Settlement:
        self.counter.scoring += 1
        ctx = context_of(ruleset_name, overrides, stake, dealer, None, huangfan, garden_stacks)
        req = scoring_pb2.SettleEscapeRequest(
            context=SC.context_to_proto(ctx, ruleset_name, dict(overrides)),
            escaped_seat=C.seat_to_proto(seat),
        )
        return settlement_from_proto(call(self.stub.SettleEscape, req, self.timeout).settlement)
