"""Where the services a test started are now, as address files (:mod:`infra.addresses`:
``--wall-addr @PATH``) that their callers — the other services, the test's players — read on
every call, as DNS would tell them in a deployment.

Every process binds ports the OS picks (:mod:`infra.ports`), so a caller cannot be told a port
before the process it calls is up, and a process started again comes back on new ones. An
:class:`AddressBook` keeps, under its directory, one file per service that the other services
call (its processes' internal ports) and files for players (their public ports), and rewrites a
service's files whenever its processes listed change:

* a process is listed (:meth:`AddressBook.list`) once it answers SERVING;
* two services that call each other (the gateway reports hands to matchmaking, matchmaking
  creates tables on the gateway) are each started with the other's file before it is written:
  until it is, a call fails UNAVAILABLE (:class:`infra.tls.AddressUnknown`) and is retried as
  for a service not up yet;
* a process that is to stop or die is taken out (:meth:`AddressBook.unlist`) first, so no call
  made after that goes to its port once it is free (any process on the machine may bind a freed
  port, and an old port listed would send calls to whatever listens there then).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from infra.addresses import address_file_flag, write_address_file
from infra.supervisor import ServiceProcess


@dataclass
class AddressListing:
    """One address file: ``service``'s processes' internal ports (where the other services
    call) or public ports (players'), those listed in the order of ``rank`` (process name -> a
    number; then by name)."""

    path: Path
    service: str
    internal: bool
    rank: dict[str, float] = field(default_factory=dict)


class AddressBook:
    """The address files under ``directory`` for the processes listed (name -> process; the
    process's ``name`` is its service, the key may be a replica's own: ``wall-1``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.listed: dict[str, ServiceProcess] = {}
        self.listings: list[AddressListing] = []

    def _listing(self, service: str, internal: bool, rank: dict[str, float] | None = None):
        kind = "internal" if internal else "public"
        if rank is None:
            for x in self.listings:
                if x.service == service and x.internal == internal and not x.rank:
                    return x
        suffix = f".{len(self.listings)}" if rank else ""
        listing = AddressListing(
            self.directory / f"{service}.{kind}{suffix}", service, internal, rank or {}
        )
        self.listings.append(listing)
        self._write(listing)
        return listing

    def service_target(self, service: str) -> str:
        """The address flag value (``@PATH``) where the other services call ``service``."""
        return address_file_flag(self._listing(service, internal=True).path)

    def player_target(
        self, service: str, shuffle: random.Random | None = None, names: list[str] = ()
    ) -> str:
        """A player's target (``@PATH``) for ``service``'s public ports; with ``shuffle``, a
        file of its own listing them in a random order of its own (ranking ``names``, the
        processes' names), so that clients start on different replicas."""
        rank = {n: shuffle.random() for n in names} if shuffle is not None else None
        return address_file_flag(self._listing(service, internal=False, rank=rank).path)

    def addresses(self, service: str, internal: bool = False) -> list[str]:
        """The listed processes of ``service``: their internal or public addresses."""
        return [
            p.internal_address if internal else p.address
            for _, p in sorted(self.listed.items())
            if p.name == service
        ]

    def _write(self, listing: AddressListing) -> None:
        names = sorted(
            (n for n, p in self.listed.items() if p.name == listing.service),
            key=lambda n: (listing.rank.get(n, 0.0), n),
        )
        procs = [self.listed[n] for n in names]
        addrs = [p.internal_address if listing.internal else p.address for p in procs]
        write_address_file(listing.path, addrs)  # none listed: empty, calls fail UNAVAILABLE

    def _publish(self, service: str) -> None:
        for listing in self.listings:
            if listing.service == service:
                self._write(listing)

    def list(self, name: str, proc: ServiceProcess) -> None:
        """Put process ``name`` (SERVING: its ports are known) in its service's files."""
        self.listed[name] = proc
        self._publish(proc.name)

    def unlist(self, name: str) -> None:
        """Take process ``name`` out of its service's files (before it stops or is killed)."""
        proc = self.listed.pop(name)
        self._publish(proc.name)
