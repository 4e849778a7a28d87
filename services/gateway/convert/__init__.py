"""Conversion between ``mahjong.gateway.v1`` messages and the gateway's domain values:
actions (:mod:`.actions`), events (:mod:`.events`), views (:mod:`.views`)."""
