"""A viewer's table view (:mod:`services.gateway.domain.session.views`) as the proto
``mahjong.gateway.v1.TableView``."""

from __future__ import annotations

from typing import Any

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.convert.events import meld_to_proto, prompt_to_proto, seat, tile, tiles

PHASES = {
    "waiting": pb.TABLE_PHASE_WAITING,
    "playing": pb.TABLE_PHASE_PLAYING,
    "between_hands": pb.TABLE_PHASE_BETWEEN_HANDS,
    "finished": pb.TABLE_PHASE_FINISHED,
    "halted": pb.TABLE_PHASE_FINISHED,  # nothing more happens at it (TableHalted says why)
}


def view_to_proto(v: dict[str, Any]) -> pb.TableView:
    """A seat's (or spectator's) view (TableSession.seat_view plus the table's config)."""
    cfg = v["config"]
    tv = pb.TableView(
        table_id=v["table_id"],
        ruleset=common_pb2.RulesetRef(name=cfg.ruleset_name, options=cfg.overrides),
        stake=cfg.stake,
        tag=cfg.tag,
        max_hands=cfg.max_hands,
        hands_played=v["hands_played"],
        phase=PHASES[v["phase"]],
        last_sequence=v["last_sequence"],
        viewer=seat(v["viewer"]),
        huangfan=v["huangfan"],
        max_rounds=v["max_rounds"],
        rounds_played=v["rounds_played"],
        garden=v["garden"],
        seat_deadline_unix_ms=v.get("seat_deadline_ms", 0),
        end_by_unix_ms=cfg.end_by_ms,
        next_hand_unix_ms=v.get("next_hand_ms", 0),
        escape_penalty=v.get("escape_penalty", 0),
    )
    for s in v["seats"]:
        sv = tv.seats.add(
            seat=seat(s["seat"]),
            player_id=s["player_id"],
            display_name=s["display_name"],
            bot=s["bot"],
            auto_play=s["auto_play"],
            left=s["left"],
            chips=s["chips"],
            concealed_count=s.get("concealed_count", 0),
            ready=s.get("ready", False),
            garden_stack=s.get("garden_stack", 0),
            next_ready=s.get("next_ready", False),
        )
        sv.concealed.extend(tiles(s.get("concealed", [])))
        sv.melds.extend(meld_to_proto(m) for m in s.get("melds", []))
        sv.flowers.extend(tiles(s.get("flowers", [])))
        sv.discards.extend(tiles(s.get("discards", [])))
        sv.claimed_discards.extend(s.get("claimed_discards", []))
        if s.get("drawn") is not None:
            sv.drawn = tile(s["drawn"])
    h = v.get("hand")
    if h:
        tv.hand.CopyFrom(
            pb.HandView(
                hand_id=h["hand_id"],
                hand_number=h["hand_number"],
                dealer=seat(h["dealer"]),
                dice=common_pb2.Dice(first=h["dice"][0], second=h["dice"][1]),
                commitment=h["commitment"],
                kaibao=h["kaibao"],
                huangfan=h["huangfan"],
                tiles_left=h["tiles_left"],
                to_act=seat(h["to_act"]),
                deadline_unix_ms=h["deadline_ms"],
                last_discard=tile(h["last_discard"]),
                last_discard_seat=seat(h["last_discard_seat"]),
                finished=h["finished"],
                wild_indicator=tile(h.get("wild_indicator")),
                wild_kind=tile(h.get("wild_kind")),
            )
        )
    p = v.get("prompt")
    if p is not None:
        tv.prompt.CopyFrom(prompt_to_proto(p))
    return tv
