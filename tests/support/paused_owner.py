"""A paused owner (issue 32), measured through the project's Python client: a person's table on
replica A, the person and a spectator connected to A, another spectator to B, each a
:class:`~mahjong_client.player.RemotePlayer` that knows the other replicas; A is SIGSTOPped
just as the person discards (the discard goes to A). How long, from the SIGSTOP, until the
person's act was accepted and until each client's next event arrived
(tests/e2e/test_paused_owner.py, tests/bench/bench_cluster.py)."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import grpc

from mahjong_client.player import RemotePlayer
from services.gateway.bots import PlanningBot


class HeldBot(PlanningBot):
    """Decides its own turn only once let (``release``), after saying it was asked
    (``asked``)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.release = threading.Event()

    def own_turn(self, view, options):
        self.asked.set()
        self.release.wait(60)
        return super().own_turn(view, options)


class TimedPlayer(RemotePlayer):
    """Notes when each event arrived (``arrived``) and when each action was accepted."""

    def __init__(self, *args, **kwargs) -> None:
        self.arrived: list[float] = []
        self.accepted: list[float] = []
        super().__init__(*args, on_event=lambda _: self.arrived.append(time.monotonic()), **kwargs)

    def act(self, action, *, request_id: str = ""):
        resp = super().act(action, request_id=request_id)
        if resp is not None:
            self.accepted.append(time.monotonic())
        return resp


def first_after(times: list[float], t: float) -> float | None:
    """Seconds from ``t`` to the first of ``times`` after it (None: none yet)."""
    later = [x - t for x in times if x > t]
    return later[0] if later else None


@dataclass
class PausedRun:
    """Seconds from the SIGSTOP: to the person's act accepted, and to each client's next event
    (by name: ``person``, ``spectator-on-owner``, ``spectator-elsewhere``); whether the owner
    stayed paused meanwhile."""

    acted: float | None
    nexts: dict[str, float | None]
    stayed_paused: bool
    person: TimedPlayer

    def shown(self) -> str:
        events = ", ".join(f"{k} {v:.2f} s" if v else f"{k} none" for k, v in self.nexts.items())
        acted = f"{self.acted:.2f} s" if self.acted else "never"
        return f"act accepted {acted}; next event: {events}"


def paused_run(
    owner: subprocess.Popen,
    table_id: str,
    token: str,
    channels: list[grpc.Channel],
    lease_s: float,
    pause_s: float,
) -> PausedRun:
    """The table's person (``token``) and a spectator on ``channels[0]`` (the owner's), another
    spectator on ``channels[1]``; the owner SIGSTOPped as the person discards, SIGCONTed
    ``pause_s`` later. The person knows the lease (``lease_s``: it decides before it reads the
    stream's first heartbeat); the spectators learn it from theirs. The players are closed but
    the person's, which the caller may use (to leave) and must close."""
    on_owner, elsewhere = channels[0], channels[1]
    bot = HeldBot()
    person = TimedPlayer(
        on_owner, table_id, token, seat=0, policy=bot, fallbacks=channels[1:], lease_s=lease_s
    )
    watchers = [
        TimedPlayer.join(first, table_id, spectator=True, fallbacks=rest, name=name)
        for name, first, rest in (
            ("spectator-on-owner", on_owner, channels[1:]),
            ("spectator-elsewhere", elsewhere, [*channels[2:], on_owner]),
        )
    ]
    players = {"person": person, **{w.name: w for w in watchers}}
    try:
        for p in players.values():
            p.start()
        if not bot.asked.wait(30):
            raise TimeoutError("the person was never prompted")
        deadline = time.monotonic() + 10
        while not all(w.lease.seconds == lease_s for w in watchers):  # their first heartbeat
            if time.monotonic() > deadline:
                raise TimeoutError("a spectator never heard a heartbeat")
            time.sleep(0.05)
        time.sleep(lease_s / 6)  # between two heartbeats
        owner.send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        try:
            bot.release.set()  # the discard goes to the owner, paused
            until = paused + pause_s - 1
            while time.monotonic() < until and not (
                person.accepted and all(first_after(p.arrived, paused) for p in players.values())
            ):
                time.sleep(0.05)
            acted = first_after(person.accepted, paused)
            nexts = {n: first_after(p.arrived, paused) for n, p in players.items()}
            stayed = owner.poll() is None and time.monotonic() - paused < pause_s
        finally:
            time.sleep(max(0.0, pause_s - (time.monotonic() - paused)))
            owner.send_signal(signal.SIGCONT)
        for p in players.values():
            if p.error is not None:
                raise p.error
        return PausedRun(acted, nexts, stayed, person)
    finally:
        for w in watchers:
            w.close()
        person.stop()
