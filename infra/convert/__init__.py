"""Protobuf <-> domain conversion, once for every service and its clients.

One module per proto area: :mod:`infra.convert.common` for ``mahjong.common.v1`` (tiles, seats,
melds, hand types, win kinds, dice, ruleset references); the service areas add their own module
(``rules.py``, ``scoring.py``, ``gateway.py``, ``matchmaking.py``). Converters *from* proto
validate and raise :class:`shared.errors.InvalidArgument` naming the offending field, so a
servicer never hands malformed input to the domain.

These are the only shared modules that import generated code; domain modules never do.
"""
