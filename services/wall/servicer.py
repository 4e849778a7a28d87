"""WallService over gRPC: protobuf ↔ domain translation only (the rules live in the domain
modules: shuffle, wall, record, repository)."""

from __future__ import annotations

from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc
from prometheus_client import Counter

from infra.convert import common as C
from services.wall.domain.events import DEAL, DRAW, INDICATOR, REPLACEMENT, SWAP, WallEvent
from services.wall.domain.record import HandWall, tile_set_to_json
from services.wall.domain.wall import SEATS, opened_seat
from services.wall.storage.repository import WallRepository
from shared.errors import FailedPrecondition, InvalidArgument
from shared.tile_set import tile_set_of

HANDS_STARTED = Counter("mahjong_wall_hands_started_total", "Hands whose wall was shuffled.")
HANDS_REVEALED = Counter("mahjong_wall_hands_revealed_total", "Reveal calls answered.")
TILES_DRAWN = Counter(
    "mahjong_wall_tiles_drawn_total",
    "Tiles handed out, by kind of draw (deal, live, replacement, swap).",
    ["kind"],
)

_EVENT_KIND = {
    DEAL: wall_pb2.WALL_EVENT_KIND_DEAL,
    DRAW: wall_pb2.WALL_EVENT_KIND_DRAW,
    REPLACEMENT: wall_pb2.WALL_EVENT_KIND_REPLACEMENT,
    SWAP: wall_pb2.WALL_EVENT_KIND_SWAP,
    INDICATOR: wall_pb2.WALL_EVENT_KIND_INDICATOR,
}


def counts_pb(hand: HandWall, at: int | None = None) -> wall_pb2.WallCounts:
    """The wall's counts now, or ``at`` an event: an answer repeated for a retried request
    has the counts its first answer had (:meth:`HandWall.drawn_after`)."""
    w = hand.wall
    live, replacements = (
        (w.live_drawn, w.replacements_drawn) if at is None else hand.drawn_after(at)
    )
    remaining = w.size - live - replacements
    return wall_pb2.WallCounts(
        remaining=remaining,
        drawable=max(remaining - w.reserved, 0),
        reserved=w.reserved,
        live_drawn=live,
        replacements_drawn=replacements,
    )


def layout_pb(hand: HandWall) -> wall_pb2.WallLayout:
    return wall_pb2.WallLayout(
        opened_seat=C.seat_to_proto(opened_seat(hand.dealer, hand.dice)),
        break_stack=hand.wall.start,
    )


def event_pb(event: WallEvent) -> wall_pb2.WallEvent:
    return wall_pb2.WallEvent(
        sequence=event.sequence,
        kind=_EVENT_KIND[event.kind],
        seat=C.seat_to_proto(event.seat),
        tiles=C.tiles_to_proto(event.tiles),
        buried=C.tiles_to_proto(event.buried),
    )


class WallServicer(wall_pb2_grpc.WallServiceServicer):
    def __init__(self, repo: WallRepository, *, allow_fixed_seed: bool = False) -> None:
        self.repo = repo
        self.allow_fixed_seed = allow_fixed_seed

    def NewHand(self, request, context):
        dealer = C.seat_from_proto(request.dealer, "dealer")
        ruleset = C.ruleset_from_ref(request.ruleset if request.HasField("ruleset") else None)
        seed = None
        if request.seed:
            if not self.allow_fixed_seed:
                raise FailedPrecondition(
                    "a fixed seed is accepted only by a wall started with --allow-fixed-seed "
                    "(tests and replays)",
                    reason="FIXED_SEED_DISABLED",
                )
            if len(request.seed) != 32:
                raise InvalidArgument(
                    f"seed has {len(request.seed)} bytes; a seed is 32 bytes", field="seed"
                )
            seed = bytes(request.seed)
        table = ruleset.table
        hand = self.repo.new_hand(
            dealer,
            seed=seed,
            reserved=table.reserved_tiles,
            swap_count=table.tile_swap_count if table.tile_swap else 0,
            request_id=request.request_id,
            tile_set=tile_set_of(ruleset),
        )
        HANDS_STARTED.inc()
        return wall_pb2.NewHandResponse(
            hand_id=hand.hand_id,
            dice=C.dice_to_proto(hand.dice),
            commitment=hand.commitment,
            layout=layout_pb(hand),
            counts=counts_pb(hand, at=0),  # before anything was drawn, when repeated too
        )

    def Deal(self, request, context):
        hands, hand, fresh = self.repo.deal(request.hand_id)
        if fresh:
            TILES_DRAWN.labels("deal").inc(sum(map(len, hands)))
        return wall_pb2.DealResponse(
            hands=[
                wall_pb2.SeatTiles(
                    seat=C.seat_to_proto(seat),
                    tiles=C.tiles_to_proto(tiles),
                    flowers=C.tiles_to_proto(k for k in tiles if hand.tile_set.is_bonus(k)),
                )
                for seat, tiles in enumerate(hands)
            ],
            counts=counts_pb(hand, at=SEATS),  # the deal is the first four events
        )

    def _draw(self, request, draw, label: str, response_type):
        seat = C.seat_from_proto(request.seat, "seat")
        event, hand = draw(request.hand_id, seat, request.request_id, request.owner_epoch)
        TILES_DRAWN.labels(label).inc()
        return response_type(
            tile=C.tile_to_proto(event.tiles[0]),
            counts=counts_pb(hand, at=event.sequence),
            sequence=event.sequence,
        )

    def Draw(self, request, context):
        return self._draw(request, self.repo.draw, "live", wall_pb2.DrawResponse)

    def DrawReplacement(self, request, context):
        return self._draw(
            request, self.repo.draw_replacement, "replacement", wall_pb2.DrawReplacementResponse
        )

    def Remaining(self, request, context):
        hand = self.repo.get(request.hand_id)
        return wall_pb2.RemainingResponse(counts=counts_pb(hand), revealed=hand.revealed)

    def SwapTiles(self, request, context):
        seat = C.seat_from_proto(request.seat, "seat")
        buried = C.tiles_from_proto(request.buried, "buried")
        event, hand = self.repo.swap(
            request.hand_id, seat, buried, request.request_id, request.owner_epoch
        )
        TILES_DRAWN.labels("swap").inc(len(event.tiles))
        return wall_pb2.SwapTilesResponse(
            taken=C.tiles_to_proto(event.tiles),
            counts=counts_pb(hand, at=event.sequence),
            sequence=event.sequence,
        )

    def FlipIndicator(self, request, context):
        event, hand = self.repo.flip_indicator(
            request.hand_id, request.request_id, request.owner_epoch
        )
        *aside, indicator = event.tiles
        return wall_pb2.FlipIndicatorResponse(
            indicator=C.tile_to_proto(indicator),
            wild=C.tile_to_proto(hand.tile_set.wild_kind_for(indicator)),
            set_aside=C.tiles_to_proto(aside),
            counts=counts_pb(hand, at=event.sequence),
            sequence=event.sequence,
        )

    def Reveal(self, request, context):
        hand = self.repo.reveal(request.hand_id, request.owner_epoch, request.next_request_id)
        HANDS_REVEALED.inc()
        return wall_pb2.RevealResponse(
            seed=hand.seed,
            commitment=hand.commitment,
            dice=C.dice_to_proto(hand.dice),
            dealer=C.seat_to_proto(hand.dealer),
            layout=layout_pb(hand),
            events=[event_pb(e) for e in hand.events],
            reserved_tiles=hand.wall.reserved,
            tile_swap_count=hand.swap_count,
            tile_set=wall_pb2.TileSetFacts(**(tile_set_to_json(hand.tile_set) or {})),
        )
