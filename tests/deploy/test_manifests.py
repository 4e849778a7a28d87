"""Every Kubernetes manifest under deploy/k8s (globbed, so each service's manifests are
checked as they are added) validates offline with ``kubernetes-validate --strict``; every
kustomization resolves and renders to valid resources; every Deployment meets the operational
bar: native grpc probes, non-root, read-only root filesystem, requests and limits, the image's
``mahjong serve <service>`` contract, and a headless Service in front of it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from services.cli import servable

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
BASE = K8S / "base"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
K8S_VERSION = kubernetes_validate.latest_version()
KUSTOMIZATION = "kustomization.yaml"

ALL_YAML = sorted(p for p in K8S.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
KUSTOMIZATIONS = [p for p in ALL_YAML if p.name == KUSTOMIZATION]


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


def test_kubernetes_validate_cli_strict_on_every_manifest():
    """The same check through the command-line tool, as CI or a developer would run it."""
    cli = Path(sys.executable).parent / "kubernetes-validate"
    result = subprocess.run(
        [str(cli), "--strict", "--quiet", "-k", K8S_VERSION, *map(str, MANIFESTS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


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
    assert data["kind"] == "Kustomization"
    assert _resources(kustomization)


def test_every_base_manifest_is_in_the_base_kustomization():
    reached = {p.resolve() for p in _resources(BASE / KUSTOMIZATION)}
    for path in MANIFESTS:
        if BASE in path.parents:
            assert path.resolve() in reached, (
                f"{_rel(path)} is not listed: add it to its kustomization.yaml and the service "
                f"directory to {_rel(BASE / KUSTOMIZATION)}"
            )


def _render(directory: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl (with kustomize) is not installed; the file checks above still ran")
    result = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS, ids=_rel)
def test_kustomization_renders_valid_resources(kustomization):
    docs = _render(kustomization.parent)
    for doc in docs:
        _validate(doc, f"kustomize {_rel(kustomization.parent)}")
    for dep in (d for d in docs if d["kind"] == "Deployment"):
        check_deployment(dep, f"kustomize {_rel(kustomization.parent)}")
    check_services_front_deployments(docs, _rel(kustomization.parent))


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
        for probe in ("livenessProbe", "readinessProbe"):
            grpc_probe = (c.get(probe) or {}).get("grpc")
            assert grpc_probe, f"{cl}: no native grpc {probe}"
            assert grpc_probe["port"] in ports, f"{cl}: {probe} port is not a container port"
        args = c.get("args") or []
        assert not c.get("command"), f"{cl}: overrides the image entrypoint (mahjong serve)"
        assert args and args[0] in services, (
            f"{cl}: args must start with the service name (the image runs `mahjong serve`); "
            f"got {args[:2]}, services: {sorted(services)}"
        )
        assert re.match(r"^([\w.-]+/)*mahjong(:[\w.-]+)?$", c["image"]), f"{cl}: image {c['image']}"


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
    "directory", sorted(p for p in BASE.iterdir() if p.is_dir()), ids=lambda p: p.name
)
def test_each_service_has_a_headless_service(directory):
    docs = [d for p in MANIFESTS if p.parent == directory for d in _docs(p)]
    check_services_front_deployments(docs, _rel(directory))


@pytest.mark.parametrize(("where", "dep"), _deployments(), ids=[w for w, _ in _deployments()])
def test_ports_and_addresses_match_shared_addresses(where, dep):
    """A service listens and is probed on its port from shared/addresses.py, and every
    ``--<service>-addr`` points at that service's Service name and port."""
    from shared.addresses import DEFAULT_PORTS

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
        assert c["livenessProbe"]["grpc"]["port"] == grpc_port
        for arg in args:
            m = re.match(r"^--(\w+)-addr=(?:dns:///)?([\w.-]+):(\d+)$", arg)
            if m and m.group(1) in DEFAULT_PORTS:
                callee, host, port = m.group(1), m.group(2), int(m.group(3))
                assert port == DEFAULT_PORTS[callee][0], f"{where}: {arg} is not {callee}'s port"
                assert host.split(".")[0] in service_names, f"{where}: {arg}: no Service {host}"


def test_gateway_serves_browsers_on_its_web_port():
    """The web port from shared/addresses.py: a container port named web, the flag, and a
    Service for it; no CORS wildcard in the base or any overlay."""
    from shared.addresses import WEB_PORTS

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


def test_wall_writes_only_to_its_volumes():
    (dep,) = _docs(BASE / "wall" / "deployment.yaml")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert "--store-url=sqlite:////data/wall.db" in c["args"]
    assert {m["mountPath"] for m in c["volumeMounts"]} == {"/data", "/tmp"}


# --- the image ---------------------------------------------------------------------------------
def test_dockerfile_contract():
    text = DOCKERFILE.read_text()
    froms = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
    assert froms and froms[-1][0].startswith("python:3.11-slim")  # the image that runs
    for image, stage in froms:
        # Python stages, and the web table's build (npm ci, buf, Vite) on Node.js
        assert image.startswith("python:3.11-slim") or (image == "node:20-slim" and stage == "web")
    assert "COPY --from=web /src/web/dist" in text
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
