"""A Python client of the gateway's gRPC API (``mahjong.gateway.v1.GatewayService``): a package
of its own, beside the services and not part of them (none imports it; the image holds none of
it), installed by ``make install``.

* :class:`RemotePlayer` plays one seat: JoinSeat (or a token from CreateTable), Subscribe with
  resume from the last sequence number after a reconnect, and Act on each prompt with a bot
  policy (:mod:`services.gateway.bots`), request ids and sequence numbers handled.
* :func:`create_table` asks a gateway for a table (CreateTable) with player and bot seats.
* :mod:`.convert` turns prompts and views into the bots' domain types and actions into protos.
* :mod:`.signed_in` signs in to matchmaking and seats the player at a private room's table.
* The terminal client ``mahjong play``: :mod:`.play` (the command), :mod:`.terminal` (the
  person at the table), :mod:`.render` (what it prints).

Example — a table with one remote planning bot against three built-in bots::

    table = create_table(address, seats=["alice", None, None, None], max_hands=1)
    player = RemotePlayer(address, table.table_id, table.seat_tokens[0], seat=0)
    log = player.run()
"""

from mahjong_client.player import PlayerLog, Policy, Rejection, RemotePlayer
from mahjong_client.tables import create_table

__all__ = ["PlayerLog", "Policy", "Rejection", "RemotePlayer", "create_table"]
