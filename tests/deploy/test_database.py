"""Production's database (deploy/k8s/overlays/prod/database.yaml): PostgreSQL under a failover
manager, CloudNativePG's ``Cluster``. Checked offline on the rendered overlay: three instances
on distinct nodes, a synchronous standby every commit waits for (an acknowledged act survives
the primary's loss), the services connecting through the Cluster's read-write Service over
verified TLS with ``target_session_attrs=read-write``, its CA mounted where the URL says, and
its pods under the namespace's default-deny with exactly the traffic it needs
(tests/deploy/test_manifests.py checks the whole graph). The failover itself is played with
real PostgreSQL processes in tests/e2e/test_database_failover.py."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from tests.deploy import cnpg
from tests.deploy.test_manifests import (
    BASE,
    K8S,
    STATEFUL,
    _by_kind,
    _changed,
    _container,
    _env,
    _render,
    _validate,
    check_cluster_layout,
    check_network,
)

PROD = K8S / "overlays" / "prod"


def check_database(docs: list[dict], where: str) -> None:
    (cluster,) = cnpg.clusters(docs)
    spec, name = cluster["spec"], cluster["metadata"]["name"]
    label = f"{where}: Cluster {name}"
    _validate(cluster, where)
    assert spec["instances"] >= 3, f"{label}: {spec['instances']} instances"
    assert cnpg.sync_standbys(cluster) >= 1, f"{label}: no synchronous standby is required"
    assert cnpg.sync_standbys(cluster) < spec["instances"] - 1, f"{label}: no standby to spare"
    affinity = spec.get("affinity") or {}
    assert affinity.get("enablePodAntiAffinity", True), label
    assert affinity.get("podAntiAffinityType") == "required", f"{label}: two on one node"
    assert spec.get("enablePDB", True), label
    assert spec.get("primaryUpdateMethod") == "switchover", label
    deps = _by_kind(docs, "Deployment")
    for service in STATEFUL:
        c = _container(deps[service])
        cnpg.check_store_env(_env(c), cluster, f"{where}: {service}")
        # the CA the URL verifies the server with: the operator's, mounted read-only there
        url = _env(c)["MAHJONG_STORE_URL"]["value"]
        ca_file = dict(parse_qsl(urlsplit(url).query))["sslrootcert"]
        mounts = [m for m in c["volumeMounts"] if ca_file.startswith(m["mountPath"] + "/")]
        assert len(mounts) == 1 and mounts[0].get("readOnly"), f"{where}: {service} {mounts}"
        volumes = {v["name"]: v for v in deps[service]["spec"]["template"]["spec"]["volumes"]}
        secret = volumes[mounts[0]["name"]]["secret"]
        assert secret["secretName"] == f"{name}-ca", f"{where}: {service} {secret}"


def test_prod_deploys_postgresql_with_a_synchronous_standby():
    check_database(_render(PROD), "overlays/prod")


def test_the_base_deploys_no_database():
    """The base leaves the database to the studio (the Secret mahjong-store names it)."""
    docs = _render(BASE)
    assert not cnpg.clusters(docs)
    check_cluster_layout(docs, "base")


def test_database_checks_are_not_vacuous():
    docs = _render(PROD)

    def cluster(ds):
        return cnpg.clusters(ds)[0]["spec"]

    def store_env(ds, service="gateway"):
        return _env(_container(_by_kind(ds, "Deployment")[service]))

    def asynchronous(ds):
        del cluster(ds)["postgresql"]["synchronous"]

    def preferred(ds):  # a commit on the primary alone when the standbys are away
        cluster(ds)["postgresql"]["synchronous"]["dataDurability"] = "preferred"

    def one_instance(ds):
        cluster(ds)["instances"] = 1

    def shared_nodes(ds):
        cluster(ds)["affinity"]["podAntiAffinityType"] = "preferred"

    def read_only_service(ds):
        url = store_env(ds, "wall")["MAHJONG_STORE_URL"]
        url["value"] = url["value"].replace("mahjong-db-rw", "mahjong-db-ro")

    def any_session(ds):
        url = store_env(ds, "matchmaking")["MAHJONG_STORE_URL"]
        url["value"] = url["value"].replace("target_session_attrs=read-write", "x=y")

    def unverified(ds):
        url = store_env(ds)["MAHJONG_STORE_URL"]
        url["value"] = url["value"].replace("sslmode=verify-full", "sslmode=require")

    def password_in_url(ds):
        url = store_env(ds)["MAHJONG_STORE_URL"]
        url["value"] = url["value"].replace("mahjong@", "mahjong:hunter2@")

    def wrong_password(ds):
        store_env(ds)["PGPASSWORD"]["valueFrom"]["secretKeyRef"]["name"] = "mahjong-store"

    def no_ca(ds):
        _container(_by_kind(ds, "Deployment")["wall"])["volumeMounts"] = [
            m
            for m in _container(_by_kind(ds, "Deployment")["wall"])["volumeMounts"]
            if m["name"] != "store-ca"
        ]

    for change in (
        asynchronous,
        preferred,
        one_instance,
        shared_nodes,
        read_only_service,
        any_session,
        unverified,
        password_in_url,
        wrong_password,
        no_ca,
    ):
        with pytest.raises(AssertionError):
            check_database(_changed(docs, change), change.__name__)


def test_cluster_schema_is_strict():
    (good,) = cnpg.clusters(_render(PROD))
    _validate(good, "test")

    def broken(change) -> dict:
        copy = yaml.safe_load(yaml.safe_dump(good))
        change(copy["spec"])
        return copy

    for bad in (
        broken(lambda s: s["postgresql"].update(synchronus={"method": "any", "number": 1})),
        broken(lambda s: s["postgresql"]["synchronous"].update(method="all")),
        broken(lambda s: s["postgresql"]["synchronous"].update(number=0)),
        broken(lambda s: s.update(instances="3")),
        broken(lambda s: s["storage"].update(size="20 GB")),
        broken(lambda s: s.pop("storage")),
        broken(lambda s: s["bootstrap"]["initdb"].pop("owner")),
    ):
        with pytest.raises(pytest.fail.Exception):
            _validate(bad, "test")


def test_database_network_is_not_open():
    """Opened to every pod, or with the services' egress to it removed, the graph check fails."""
    docs = _render(PROD)

    def policy(ds, name):
        return _by_kind(ds, "NetworkPolicy")[name]["spec"]

    def open_to_all(ds):
        policy(ds, "postgres")["ingress"].append({})

    def leaks_anywhere(ds):
        policy(ds, "postgres")["egress"].append({})

    def store_elsewhere(ds):
        policy(ds, "store-egress")["egress"][0]["to"] = [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "postgres"}}}
        ]

    check_network(docs, "prod", with_store=True)
    for change in (open_to_all, leaks_anywhere, store_elsewhere):
        with pytest.raises(AssertionError):
            check_network(_changed(docs, change), change.__name__, with_store=True)
