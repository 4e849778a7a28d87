"""Rounds (圈) of a table session: when the deal has gone once around the table.

In Shanghai rules the winner deals the next hand and a drawn hand is dealt again by the same
dealer (RULES §2), so the deal does not simply pass to the next seat after every hand, and a
seat that never wins might never deal. "Every seat has dealt once" could therefore never come
true; the round is instead measured by how far the deal has travelled:

* Each hand moves the deal forward in turn order by ``(next_dealer - dealer) mod 4`` seats
  (:func:`deal_advance`): 0 when the dealer deals again (连庄 after a win or a drawn hand),
  1 when the next seat deals, 2 or 3 when a winner further round the table takes the deal —
  the seats in between are passed over, their turn to deal in this round is gone.
* The advances are summed from the table's first hand; a round is complete each time the sum
  reaches another multiple of 4 (:func:`rounds_completed`): the deal has come back to, or gone
  past, the seat that dealt the table's first hand. Going past it starts the next round that
  many seats in (the deal keeps its place on the table).

Example (first dealer 0): 0 wins (advance 0), 2 wins (2), a drawn hand (0), 1 wins (3): total 5,
one round complete and the second a quarter done. A limit of N rounds ends the table after the
hand whose result completes the N-th round.
"""

from __future__ import annotations

from shared.table import NUM_SEATS


def deal_advance(dealer: int, next_dealer: int) -> int:
    """How many seats the deal moves forward in turn order from ``dealer`` to ``next_dealer``."""
    return (next_dealer - dealer) % NUM_SEATS


def rounds_completed(total_advance: int) -> int:
    """Complete rounds (圈) after the deal has moved ``total_advance`` seats in all."""
    return total_advance // NUM_SEATS
