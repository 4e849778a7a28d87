"""What the image holds, against what the manifests run and what the prod overlay pins.

* Every container of every overlay runs a command the image has: its ``command`` (or, without
  one, the image's entrypoint) found on the image's PATH, and its first argument a service that
  ``mahjong serve`` knows (``mahjong serve NAME --help`` exits 0 in the image).
* The prod overlay pins the digest ``make image`` produced (the OCI layout it wrote,
  build/image/oci, whose manifest digest a push with ``skopeo copy --preserve-digests`` keeps),
  under the name ``make image`` tagged.
* The runtime is what the Dockerfile promises: user 10001, no compiler, no pip.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from tests.image.podman import K8S, ROOT, podman, render, require_podman

OVERLAYS = [K8S / "base", K8S / "overlays" / "dev", K8S / "overlays" / "prod"]
IMAGE_DIR = ROOT / "build" / "image"


@pytest.fixture(scope="module")
def the_image():
    return require_podman()


@pytest.fixture(scope="module")
def config(the_image) -> dict:
    return json.loads(podman("image", "inspect", the_image).stdout)[0]["Config"]


def in_image(the_image: str, script: str) -> str:
    return podman(
        "run", "--rm", "--network", "none", "--entrypoint", "sh", the_image, "-c", script
    ).stdout


def commands_of(docs: list[dict], entrypoint: list[str]) -> list[tuple[str, str, list[str]]]:
    """(deployment, executable, args) of every container: ``command`` replaces the image's
    entrypoint, as the kubelet does."""
    out = []
    for d in docs:
        if d.get("kind") != "Deployment":
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            argv = [*(c.get("command") or entrypoint), *(c.get("args") or [])]
            out.append((d["metadata"]["name"], argv[0], argv[1:]))
    return out


def missing_commands(the_image: str, commands) -> list[str]:
    """The executables of ``commands`` that the image's PATH has not."""
    names = sorted({exe for _, exe, _ in commands})
    script = "; ".join(
        f"command -v {shlex.quote(n)} >/dev/null || echo {shlex.quote(n)}" for n in names
    )
    return in_image(the_image, script).split()


def test_every_manifest_runs_a_command_the_image_has(the_image, config):
    entrypoint = config["Entrypoint"]
    assert entrypoint == ["mahjong", "serve"]
    for overlay in OVERLAYS:
        commands = commands_of(render(overlay), entrypoint)
        assert commands, overlay
        assert missing_commands(the_image, commands) == [], overlay
        for name, exe, args in commands:
            if exe == "mahjong" and args[:1] == ["serve"]:
                service = args[1]  # mahjong serve SERVICE ...
                r = podman(
                    "run", "--rm", "--network", "none", the_image, service, "--help", check=False
                )
                assert r.returncode == 0, (
                    f"{overlay.name}/{name}: `mahjong serve {service}`: {r.stderr}"
                )


def test_the_command_check_is_not_vacuous(the_image, config):
    docs = render(K8S / "base")
    dep = next(d for d in docs if d.get("kind") == "Deployment")
    dep["spec"]["template"]["spec"]["containers"][0]["command"] = ["gunicorn"]
    assert missing_commands(the_image, commands_of([dep], config["Entrypoint"])) == ["gunicorn"]


def test_prod_overlay_pins_the_digest_make_image_wrote(the_image):
    (entry,) = yaml.safe_load((K8S / "overlays" / "prod" / "kustomization.yaml").read_text())[
        "images"
    ]
    digest = (IMAGE_DIR / "digest").read_text().strip()
    index = json.loads((IMAGE_DIR / "oci" / "index.json").read_text())
    assert [m["digest"] for m in index["manifests"]] == [digest]
    assert entry["digest"] == digest
    assert entry["newName"] == the_image.rsplit(":", 1)[0]
    rendered = {
        c["image"]
        for d in render(K8S / "overlays" / "prod")
        if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    }
    assert rendered == {f"{entry['newName']}@{digest}"}
    # and that digest is this image: its config (the image id) is the one podman holds
    manifest = json.loads((IMAGE_DIR / "oci" / "blobs" / Path(*digest.split(":"))).read_text())
    image_id = podman("image", "inspect", "--format", "{{.Id}}", the_image).stdout.strip()
    assert manifest["config"]["digest"] == f"sha256:{image_id}"


def test_runtime_has_no_compiler_no_pip_and_runs_as_10001(the_image):
    out = in_image(
        the_image,
        "id -u; id -g; for c in gcc cc pip pip3; do command -v $c; done; "
        "python3 -c 'import sys; print(sys.version_info[:2])'",
    )
    lines = out.split("\n")
    assert lines[:2] == ["10001", "10001"], out
    assert "(3, 11)" in out
    assert "gcc" not in out and "/pip" not in out, out
    # the compiled hot path is in (mypyc's extensions, not their .py alone)
    so = in_image(
        the_image, "ls /opt/mahjong/lib/python3.11/site-packages/shared/ | grep -c '\\.so$'"
    )
    assert int(so.strip()) >= 2
