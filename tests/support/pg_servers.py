"""PostgreSQL servers a test starts itself (the binaries of /usr/lib/postgresql/<version>/bin):
a primary made by ``initdb``, a streaming standby made from it by ``pg_basebackup``, killed
(SIGKILL to every process of the server: a node that died), restarted or promoted. For the
database failover tests; the shared test server (tests/support/postgres.py) is never touched.

PostgreSQL refuses to run as root: when the tests run as root, every server command runs as the
``postgres`` user (``setpriv``) in a temporary directory owned by it. Each server listens on
127.0.0.1 at a port found free, and on a Unix socket in its own directory."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg

from tests.support.postgres import SKIP_PREFIX, unavailable

BIN_ROOT = Path("/usr/lib/postgresql")
USER = "postgres"


def pg_bin() -> Path | None:
    """The newest installed server's bin directory, if any."""
    found = sorted(BIN_ROOT.glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def _as_user() -> list[str]:
    """The prefix that runs a command as the server user when the tests run as root:
    ``setpriv`` changes the user and executes the command in its place, so the server is this
    process's own child (reaped here when killed; ``runuser`` would stay between, and a killed
    server's postmaster would linger unreaped). Not Popen's ``user=``: that makes Python fork
    instead of vfork, and the child runs the fork handlers of this process's gRPC threads
    before its exec (one crashed there)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "--"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One server: its data directory, port and process."""

    def __init__(self, root: Path, name: str, bin_dir: Path) -> None:
        self.root, self.name, self.bin = root, name, bin_dir
        self.data = root / name
        self.sockets = root / f"{name}-sock"
        self.log = root / f"{name}.log"
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.settings: tuple[str, ...] = ()

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *argv: str) -> None:
        result = subprocess.run(
            [*_as_user(), *argv], capture_output=True, text=True, timeout=120, cwd=self.root
        )
        assert result.returncode == 0, f"{argv[0]}: {result.stdout}{result.stderr}"

    def initdb(self) -> PgServer:
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust",
            "-E", "UTF8", "--no-sync", "--no-instructions",
        )  # fmt: skip
        return self

    def base_backup_of(self, primary: PgServer) -> PgServer:
        """A copy of ``primary`` set up as its streaming standby (``-R``: standby.signal and
        primary_conninfo), named ``self.name`` to the primary (application_name)."""
        self._run(
            str(self.bin / "pg_basebackup"), "-D", str(self.data), "-h", "127.0.0.1",
            "-p", str(primary.port), "-U", USER, "-X", "stream", "-R", "-c", "fast",
            "--no-sync", "-d", f"application_name={self.name}",
        )  # fmt: skip
        return self

    def start(self, *settings: str) -> PgServer:
        """Start (again) with ``settings`` (``name=value``; kept for a restart) given on the
        command line, not written to the data directory: a standby's base backup copies its
        primary's files, and a ``synchronous_standby_names`` copied to the standby would make
        it wait, once promoted and alone, for a standby it does not have."""
        self.settings = settings or self.settings
        self.sockets.mkdir(exist_ok=True)
        _give_to_user(self.sockets)
        argv = [
            *_as_user(), str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
            "-k", str(self.sockets), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
        ]  # fmt: skip
        for s in self.settings:
            argv += ["-c", s]
        with self.log.open("ab") as log:  # its own session: kill() reaches every process
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=log, start_new_session=True, cwd=self.root
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{self.name} did not start:\n{self.log_tail()}") from exc
                time.sleep(0.1)

    def query(self, sql: str, *args):
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as c:
            return c.execute(sql, args).fetchall()

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend at once (nothing is shut down cleanly)."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        # the backends are in the killed group too; wait for the port to be free again
        deadline = time.monotonic() + 10
        while _answers(self.port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def promote(self) -> None:
        assert self.query("SELECT pg_promote(true, 30)") == [(True,)]

    def stop(self) -> None:
        """A fast shutdown if it runs (SIGINT to the postmaster); a server left killed has its
        (small) System V shared memory segment removed, which a clean shutdown or a restart
        would have removed itself."""
        if self.proc is None:
            return
        if self.proc.poll() is not None:
            _remove_segment(self.data)
            return
        pid = _postmaster_pid(self.data)
        with contextlib.suppress(ProcessLookupError, TypeError):
            os.kill(pid, signal.SIGINT)  # type: ignore[arg-type]
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- {self.name}.log\n" + "\n".join(text.splitlines()[-lines:])


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _postmaster_pid(data: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int((data / "postmaster.pid").read_text().splitlines()[0])
    return None


def _remove_segment(data: Path) -> None:
    """``ipcrm`` the segment a killed server's postmaster.pid names (its 7th line: the key and
    the id), if the file is still there."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        shmid = (data / "postmaster.pid").read_text().splitlines()[6].split()[1]
        subprocess.run(["ipcrm", "-m", shmid], capture_output=True, timeout=10, check=False)


def _give_to_user(path: Path) -> None:
    if os.geteuid() == 0:
        user = pwd.getpwnam(USER)
        os.chown(path, user.pw_uid, user.pw_gid)


@contextlib.contextmanager
def pg_servers() -> Iterator[Callable[[str], PgServer]]:
    """A factory of servers (``new(name)``) in a temporary directory the server user owns;
    every server still running is stopped at the end and the directory removed. Without the
    server binaries (or the server user) it skips, and fails under CI=true, as the tests of
    tests/support/postgres.py do."""
    bin_dir = pg_bin()
    if bin_dir is None:
        unavailable(f"{SKIP_PREFIX}: no server binaries under {BIN_ROOT}")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(USER)
        except KeyError:
            unavailable(f"{SKIP_PREFIX}: running as root and no {USER!r} user to run it as")
    root = Path(tempfile.mkdtemp(prefix="mj-pg-"))
    _give_to_user(root)
    servers: list[PgServer] = []

    def new(name: str) -> PgServer:
        server = PgServer(root, name, bin_dir)
        servers.append(server)
        return server

    try:
        yield new
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
