"""The image under test and the services started from it as the manifests start them.

* :func:`podman` runs podman with tests/image/containers.conf (no rlimits, runc, cgroupfs: what
  machines of this kind need, and harmless elsewhere), as ``make image`` does.
* :func:`require_podman`: the image tests need podman and the image ``make image`` built
  (``MAHJONG_IMAGE``); without them they skip with the reason, and under ``CI=true`` fail.
* :func:`container_specs` reads the Deployments of a rendered overlay (``kubectl kustomize``,
  the dev extras' kubectl) and :class:`ImageStack` starts one container per service from them:
  the manifest's args (the image's entrypoint is kept: no ``command``), its environment (the
  Secrets' keys given the values of this run, ``status.podIP`` = 127.0.0.1, ``$(VAR)`` in args
  expanded as the kubelet does), its user and group, its writable mounts (an emptyDir as tmpfs,
  a PVC as a volume of its own; the TLS Secret mounted read-only, mode 0440 to group 10001 as
  ``defaultMode: 288`` and ``fsGroup`` make it) and nothing else writable (``--read-only``,
  no tmpfs podman adds by itself, no volume for the image's VOLUME /data unless a manifest
  mounts one), every capability dropped. The containers share the host's
  network; every port of the manifest is moved to a free loopback port, and the addresses of
  the other services (``dns:///wall:50051``) to theirs.
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from devkit import dev_ca
from infra.addresses import SERVICE_ORDER
from infra.tls import OPERATOR

ROOT = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = Path(__file__).with_name("containers.conf")
K8S = ROOT / "deploy" / "k8s"
KUBECTL = Path(sys.executable).parent / "kubectl"
DEFAULT_IMAGE = "registry.example.com/mahjong/mahjong:latest"  # the Makefile's IMAGE
SERVING = health_pb2.HealthCheckResponse.SERVING
UID = GID = 10001  # the manifests' runAsUser/runAsGroup/fsGroup and the Dockerfile's USER


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def image() -> str:
    return os.environ.get("MAHJONG_IMAGE") or DEFAULT_IMAGE


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    return subprocess.run(
        ["podman", *args], env=env, capture_output=True, text=True, check=check, timeout=timeout
    )


def unavailable(reason: str) -> None:
    """Fail under CI (the image must be tested there), skip elsewhere; the reason printed."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: the image tests must run)", pytrace=False)
    print(f"image tests skipped: {reason}", file=sys.stderr)
    pytest.skip(reason)


def require_podman() -> str:
    """The image to test, once podman runs it; else skip (fail under CI) with the reason."""
    if shutil.which("podman") is None:
        unavailable("no podman (`make image-tools` installs it)")
    try:
        if podman("image", "exists", image(), check=False).returncode != 0:
            unavailable(f"no image {image()} (`make image` builds it)")
        podman("run", "--rm", "--network", "host", "--entrypoint", "true", image(), timeout=60)
    except subprocess.CalledProcessError as exc:
        unavailable(f"podman cannot run a container here: {exc.stderr.strip()[-400:]}")
    return image()


_HANDED_OUT: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A loopback port free now, below the kernel's ephemeral range. A port the kernel picked
    for a bind to port 0 is in that range, and between this check and the container's bind it
    may be taken as the source port of any outgoing connection (with host networking, the
    containers' own calls to each other): a gateway's bind then failed with "Address already
    in use". Below the range, only a program that asks for that port number takes it."""
    low, _ = _ephemeral_range()
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(max(1024, low // 2), low)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free loopback port below the ephemeral range ({low})")


def render(overlay: Path) -> list[dict]:
    out = subprocess.run(
        [str(KUBECTL), "kustomize", str(overlay)], capture_output=True, text=True, check=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


@dataclass
class ContainerSpec:
    """What a Deployment's pod template says of its one container."""

    name: str
    args: list[str]
    env: list[dict]
    mounts: list[dict]
    volumes: dict[str, dict]
    user: str
    ports: dict[str, int]  # port name -> container port
    grace_seconds: int


def container_specs(docs: list[dict]) -> dict[str, ContainerSpec]:
    specs = {}
    for d in docs:
        if d.get("kind") != "Deployment":
            continue
        pod = d["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        assert not c.get("command"), f"{d['metadata']['name']} overrides the entrypoint"
        sc = pod.get("securityContext") or {}
        specs[d["metadata"]["name"]] = ContainerSpec(
            name=d["metadata"]["name"],
            args=list(c.get("args") or []),
            env=list(c.get("env") or []),
            mounts=list(c.get("volumeMounts") or []),
            volumes={v["name"]: v for v in pod.get("volumes") or []},
            user=f"{sc.get('runAsUser', UID)}:{sc.get('runAsGroup', GID)}",
            ports={p["name"]: p["containerPort"] for p in c.get("ports") or []},
            grace_seconds=int(pod.get("terminationGracePeriodSeconds", 30)),
        )
    return specs


# The flags of a manifest's args that name a port the service binds.
PORT_FLAGS = ("--port", "--metrics-port", "--internal-port", "--health-port", "--web-port")
ADDR = re.compile(r"^dns:///([a-z-]+):(\d+)$")


@dataclass
class Running:
    spec: ContainerSpec
    container: str
    ports: dict[int, int]  # container port -> host port
    started: float  # time.monotonic() at `podman run`
    serving_after: float | None = None

    @property
    def health(self) -> str:
        return f"127.0.0.1:{self.ports[self.spec.ports['health']]}"

    def port(self, name: str) -> int:
        return self.ports[self.spec.ports[name]]

    def address(self, name: str = "grpc") -> str:
        return f"127.0.0.1:{self.port(name)}"


def health_status(address: str, timeout: float = 1.0) -> int | None:
    """The status the plaintext health port at ``address`` reports for "" (None: no answer)."""
    with grpc.insecure_channel(address) as ch:
        try:
            stub = health_pb2_grpc.HealthStub(ch)
            return stub.Check(health_pb2.HealthCheckRequest(), timeout=timeout).status
        except grpc.RpcError:
            return None


@dataclass
class ImageStack:
    """The services of ``specs`` started from ``image`` in SERVICE_ORDER (each SERVING before
    the next starts), with ``secrets`` as the values of the manifests' secretKeyRefs
    (``(secret, key)`` -> value; an optional key left out is not set)."""

    image: str
    specs: dict[str, ContainerSpec]
    workdir: Path
    secrets: dict[tuple[str, str], str] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)
    running: dict[str, Running] = field(default_factory=dict)
    tag: str = field(default_factory=lambda: secrets.token_hex(4))

    def __post_init__(self) -> None:
        self.host_ports: dict[tuple[str, int], int] = {
            (name, port): free_port()
            for name, spec in self.specs.items()
            for port in spec.ports.values()
        }
        self.tls_root = self.workdir / "tls"
        dev_ca.ensure([*SERVICE_ORDER, OPERATOR], self.tls_root)
        self.volumes: list[str] = []

    # --- what a container gets ---------------------------------------------------------------
    def tls_dir(self, service: str) -> Path:
        """The Secret mahjong-<service>-tls as the kubelet mounts it: 0440, group 10001."""
        out = self.workdir / "secrets" / service
        if not out.exists():
            out.mkdir(parents=True)
            for f in (self.tls_root / service).iterdir():
                if f.is_file():
                    shutil.copyfile(f, out / f.name)
                    os.chmod(out / f.name, 0o440)
                    os.chown(out / f.name, 0, GID)
            os.chmod(out, 0o755)
        return out

    def env_of(self, spec: ContainerSpec) -> dict[str, str]:
        env: dict[str, str] = {}
        for e in spec.env:
            src = e.get("valueFrom")
            if src is None:
                env[e["name"]] = str(e.get("value", ""))
            elif "fieldRef" in src:
                assert src["fieldRef"]["fieldPath"] == "status.podIP", e
                env[e["name"]] = "127.0.0.1"
            elif "secretKeyRef" in src:
                ref = src["secretKeyRef"]
                value = self.secrets.get((ref["name"], ref["key"]))
                if value is None:
                    assert ref.get("optional"), f"{spec.name}: no value for the Secret key {ref}"
                    continue
                env[e["name"]] = value
            else:
                raise AssertionError(f"{spec.name}: unknown env source {e}")
        return {**env, **self.extra_env}

    def args_of(self, spec: ContainerSpec, env: dict[str, str]) -> list[str]:
        out = []
        for arg in spec.args:
            arg = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), arg)
            flag, eq, value = arg.partition("=")
            if eq and flag in PORT_FLAGS:
                arg = f"{flag}={self.host_ports[(spec.name, int(value))]}"
            elif eq and flag == "--host":
                arg = "--host=127.0.0.1"  # the host's network: loopback only
            elif eq and flag.endswith("-addr") and (m := ADDR.match(value)):
                arg = f"{flag}=127.0.0.1:{self.host_ports[(m.group(1), int(m.group(2)))]}"
            out.append(arg)
        return out

    def mounts_of(self, spec: ContainerSpec) -> list[str]:
        out = []
        for m in spec.mounts:
            vol = spec.volumes[m["name"]]
            if "emptyDir" in vol:
                size = vol["emptyDir"].get("sizeLimit", "64Mi").replace("Mi", "m")
                out += ["--tmpfs", f"{m['mountPath']}:rw,size={size},mode=1777"]
            elif "secret" in vol:
                service = vol["secret"]["secretName"].removeprefix("mahjong-").removesuffix("-tls")
                out += ["-v", f"{self.tls_dir(service)}:{m['mountPath']}:ro"]
            elif "persistentVolumeClaim" in vol:
                name = f"mj-image-{spec.name}-{self.tag}"
                podman("volume", "create", name)
                self.volumes.append(name)
                out += ["-v", f"{name}:{m['mountPath']}"]
            else:
                raise AssertionError(f"{spec.name}: unknown volume {vol}")
        return out

    # --- running -------------------------------------------------------------------------------
    def start(self, service: str, timeout: float = 30.0) -> Running:
        spec = self.specs[service]
        env = self.env_of(spec)
        name = f"mj-image-{service}-{self.tag}"
        cmd = ["run", "--detach", "--name", name, "--network", "host"]
        # The image's VOLUME /data is no volume in Kubernetes unless a manifest mounts one
        # (the cluster layout does not): none here either, so it stays read-only.
        cmd += ["--read-only", "--read-only-tmpfs=false", "--image-volume", "ignore"]
        cmd += ["--user", spec.user]
        cmd += ["--group-add", str(GID), "--cap-drop", "ALL"]
        cmd += ["--security-opt", "no-new-privileges", "--stop-timeout", str(spec.grace_seconds)]
        cmd += self.mounts_of(spec)
        for k, v in env.items():
            cmd += ["-e", f"{k}={v}"]
        cmd += [self.image, *self.args_of(spec, env)]
        started = time.monotonic()
        container = podman(*cmd).stdout.strip()
        run = Running(
            spec,
            container,
            {p: self.host_ports[(service, p)] for p in spec.ports.values()},
            started,
        )
        self.running[service] = run
        deadline = started + timeout
        while time.monotonic() < deadline:
            if health_status(run.health, timeout=0.5) == SERVING:
                run.serving_after = time.monotonic() - started
                return run
            if self.state(service)["Status"] == "exited":
                break
            time.sleep(0.05)
        raise AssertionError(f"{service} never SERVING:\n{self.logs(service)}")

    def start_all(self, order=SERVICE_ORDER) -> ImageStack:
        for service in order:
            if service in self.specs:
                self.start(service)
        return self

    def state(self, service: str) -> dict:
        out = podman("inspect", "--format", "{{json .State}}", self.running[service].container)
        return json.loads(out.stdout)

    def logs(self, service: str, lines: int = 40) -> str:
        r = podman("logs", "--tail", str(lines), self.running[service].container, check=False)
        return r.stdout + r.stderr

    def terminate(self, service: str) -> None:
        podman("kill", "--signal", "TERM", self.running[service].container)

    def wait_exit(self, service: str, timeout: float) -> int:
        out = podman("wait", self.running[service].container, timeout=timeout).stdout
        return int(out.strip().splitlines()[-1])

    def close(self) -> None:
        for run in self.running.values():
            podman("rm", "--force", "--volumes", "--time", "0", run.container, check=False)
        for name in self.volumes:
            podman("volume", "rm", "--force", name, check=False)
