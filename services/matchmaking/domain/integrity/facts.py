"""What one hand says about how its seats treated each other, as the gateway reports it with the
hand (``RecordHandRequest.facts``, version 1): each win off a discard (冲 / 点炮, and 抢杠) with
the seat that discarded, each claim (碰 / 明杠) with the seat it was claimed from, each 吃 (only
ever from the seat's 上家, so counted apart), and each win passed on another seat's discard
(漏胡: the seat was offered 胡 on the tile and did not take it). A hand recorded before these
facts existed has none (``version`` 0): it counts as a hand together and nothing else."""

from __future__ import annotations

from dataclasses import dataclass

from shared.errors import InvalidArgument

FACTS_VERSION = 1  # the version this release writes and reads
SEATS = 4
MAX_FACTS = 200  # claims in one hand are far fewer (each takes a discard)

# A fact: (the seat that acted, the seat whose discard it acted on).
SeatPair = tuple[int, int]


@dataclass(frozen=True, slots=True)
class HandFacts:
    """The facts of one hand, by seat (0-3); ``version`` 0: none reported."""

    version: int = 0
    discard_wins: tuple[SeatPair, ...] = ()
    claims: tuple[SeatPair, ...] = ()
    passed_wins: tuple[SeatPair, ...] = ()
    chows: tuple[SeatPair, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.version or self.discard_wins or self.claims or self.passed_wins or self.chows
        )

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "discard_wins": [list(p) for p in self.discard_wins],
            "claims": [list(p) for p in self.claims],
            "passed_wins": [list(p) for p in self.passed_wins],
            "chows": [list(p) for p in self.chows],
        }

    @staticmethod
    def from_dict(data: dict | None) -> HandFacts:
        """The facts as stored (None or absent fields: a record from before them)."""
        if not data:
            return HandFacts()
        return HandFacts(
            int(data.get("version", 0)),
            tuple((int(a), int(b)) for a, b in data.get("discard_wins", ())),
            tuple((int(a), int(b)) for a, b in data.get("claims", ())),
            tuple((int(a), int(b)) for a, b in data.get("passed_wins", ())),
            tuple((int(a), int(b)) for a, b in data.get("chows", ())),
        )


def validate_facts(facts: HandFacts) -> None:
    """InvalidArgument naming the first malformed fact: an unknown version, a seat out of 0-3,
    a seat acting on its own discard, a 吃 from another seat than the 上家, too many facts."""
    if facts.empty:
        return
    if facts.version != FACTS_VERSION:
        raise InvalidArgument(
            f"facts version {facts.version} is not one this release reads ({FACTS_VERSION})",
            field="facts.version",
        )
    for name in ("discard_wins", "claims", "passed_wins", "chows"):
        pairs = getattr(facts, name)
        if len(pairs) > MAX_FACTS:
            raise InvalidArgument(f"facts.{name} has more than {MAX_FACTS}", field=f"facts.{name}")
        for seat, source in pairs:
            if not (0 <= seat < SEATS and 0 <= source < SEATS) or seat == source:
                raise InvalidArgument(
                    f"facts.{name} names seat {seat} from seat {source}: two distinct seats "
                    "0-3 are needed",
                    field=f"facts.{name}",
                )
    for seat, source in facts.chows:
        if source != (seat - 1) % SEATS:
            raise InvalidArgument(
                f"facts.chows names seat {seat} chowing from seat {source}: only from its 上家 "
                f"(seat {(seat - 1) % SEATS})",
                field="facts.chows",
            )
