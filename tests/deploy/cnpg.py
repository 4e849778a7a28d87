"""CloudNativePG's ``Cluster`` (postgresql.cnpg.io/v1) for the manifest tests: kubernetes-validate
has no schema for it, so it is validated here against CLUSTER_SCHEMA, strict like the rest (an
unknown or misspelt field fails, as ``--strict`` does for the built-in kinds), covering the
fields the manifests use with the operator's own enums and bounds (its CRD,
``postgresql.cnpg.io_clusters.yaml``); and the pods the operator makes of a Cluster, as the
NetworkPolicy checks see them."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import jsonschema
import pytest

CNPG = "postgresql.cnpg.io/v1"
POSTGRES_PORT, STATUS_PORT, METRICS_PORT = 5432, 8000, 9187  # the instance pods' ports
OPERATOR_NAMESPACE = "cnpg-system"  # where the operator's install puts it

_NAME = {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 50}
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_QUANTITY = {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$"}


def _strict(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


_RESOURCES = _strict(
    {
        "requests": _strict({"cpu": _QUANTITY, "memory": _QUANTITY}),
        "limits": _strict({"cpu": _QUANTITY, "memory": _QUANTITY}),
    }
)
_STORAGE = _strict({"size": _QUANTITY, "storageClass": {"type": "string"}}, ("size",))
_CLUSTER_SPEC = _strict(
    {
        "instances": {"type": "integer", "minimum": 1},
        "imageName": {"type": "string", "minLength": 1},
        "primaryUpdateStrategy": {"enum": ["unsupervised", "supervised"]},
        "primaryUpdateMethod": {"enum": ["switchover", "restart"]},
        "failoverDelay": {"type": "integer", "minimum": 0},
        "switchoverDelay": {"type": "integer", "minimum": 0},
        "enablePDB": {"type": "boolean"},
        "inheritedMetadata": _strict({"labels": _STRINGS, "annotations": _STRINGS}),
        "bootstrap": _strict(
            {
                "initdb": _strict(
                    {"database": _NAME, "owner": _NAME, "secret": _strict({"name": _NAME})},
                    ("database", "owner"),
                )
            }
        ),
        "postgresql": _strict(
            {
                "synchronous": _strict(
                    {
                        "method": {"enum": ["any", "first"]},
                        "number": {"type": "integer", "minimum": 1},
                        "dataDurability": {"enum": ["required", "preferred"]},
                        "maxStandbyNamesFromCluster": {"type": "integer", "minimum": 0},
                        "standbyNamesPre": {"type": "array", "items": {"type": "string"}},
                        "standbyNamesPost": {"type": "array", "items": {"type": "string"}},
                    },
                    ("method", "number"),
                ),
                "parameters": _STRINGS,
            }
        ),
        # the older way to ask for synchronous standbys (the tests accept either)
        "minSyncReplicas": {"type": "integer", "minimum": 0},
        "maxSyncReplicas": {"type": "integer", "minimum": 0},
        "affinity": _strict(
            {
                "enablePodAntiAffinity": {"type": "boolean"},
                "podAntiAffinityType": {"enum": ["preferred", "required"]},
                "topologyKey": {"type": "string", "minLength": 1},
            }
        ),
        "storage": _STORAGE,
        "walStorage": _STORAGE,
        "resources": _RESOURCES,
    },
    ("instances", "storage"),
)
CLUSTER_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_strict(
        {
            "apiVersion": {"const": CNPG},
            "kind": {"const": "Cluster"},
            "metadata": _strict(
                {"name": _NAME, "namespace": _NAME, "labels": _STRINGS, "annotations": _STRINGS},
                ("name",),
            ),
            "spec": _CLUSTER_SPEC,
        },
        ("apiVersion", "kind", "metadata", "spec"),
    ),
}
_VALIDATOR = jsonschema.Draft202012Validator(CLUSTER_SCHEMA)


def validate(doc: dict, where: str) -> None:
    errors = sorted(_VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        path = ".".join(str(x) for x in first.absolute_path)
        pytest.fail(f"{where}: {doc.get('kind')} {path}: {first.message}")


def clusters(docs: list[dict]) -> list[dict]:
    return [d for d in docs if d.get("apiVersion") == CNPG and d["kind"] == "Cluster"]


def instance_pods(docs: list[dict]) -> dict[str, dict]:
    """Each Cluster's instance pods as the NetworkPolicy checks see a Deployment's: named by
    their app.kubernetes.io/name (from the Cluster's inheritedMetadata), with the labels the
    operator gives them and their ports."""
    out = {}
    for c in clusters(docs):
        labels = {
            **((c["spec"].get("inheritedMetadata") or {}).get("labels") or {}),
            "cnpg.io/cluster": c["metadata"]["name"],
            "cnpg.io/podRole": "instance",
        }
        name = labels.get("app.kubernetes.io/name") or c["metadata"]["name"]
        out[name] = {
            "labels": labels,
            "ports": {"postgresql": POSTGRES_PORT, "status": STATUS_PORT, "metrics": METRICS_PORT},
        }
    return out


def sync_standbys(cluster: dict) -> int:
    """How many standbys must confirm each commit (0: asynchronous replication)."""
    spec = cluster["spec"]
    sync = (spec.get("postgresql") or {}).get("synchronous")
    if sync:
        return sync["number"] if sync.get("dataDurability", "required") == "required" else 0
    return min(spec.get("minSyncReplicas", 0), spec.get("maxSyncReplicas", 0))


# The instance manager's and the operator's own connections to each instance (a few; kept
# free beside superuser_reserved_connections).
OWN_CONNECTIONS = 10


def connection_budget(docs: list[dict], default: int) -> int:
    """How many connections the services may open: the Cluster's max_connections less the
    reserved (3) and the operator's own, or ``default`` where no Cluster is deployed."""
    found = clusters(docs)
    if not found:
        return default
    (cluster,) = found
    params = (cluster["spec"].get("postgresql") or {}).get("parameters") or {}
    return int(params.get("max_connections", "100")) - 3 - OWN_CONNECTIONS


def check_store_env(env: dict[str, dict], cluster: dict, label: str) -> None:
    """A service's store settings in a layout that deploys ``cluster``: the URL (a plain value,
    no password in it) names the Cluster's read-write Service and asks libpq for a read-write
    session over verified TLS; the password is the operator's Secret for the application."""
    name = cluster["metadata"]["name"]
    store = env["MAHJONG_STORE_URL"]
    assert set(store) == {"name", "value"}, f"{label}: MAHJONG_STORE_URL {store}"
    parts = urlsplit(store["value"])
    assert parts.scheme in ("postgresql", "postgres"), label
    assert ":" not in parts.netloc.rpartition("@")[0], f"{label}: a password in the store URL"
    assert parts.hostname == f"{name}-rw" and (parts.port or 5432) == POSTGRES_PORT, label
    db = cluster["spec"]["bootstrap"]["initdb"]
    assert (parts.username, parts.path) == (db["owner"], "/" + db["database"]), label
    query = dict(parse_qsl(parts.query))
    assert query.get("target_session_attrs") == "read-write", f"{label}: {query}"
    assert query.get("sslmode") == "verify-full" and query.get("sslrootcert"), f"{label}: {query}"
    password = env["PGPASSWORD"]["valueFrom"]["secretKeyRef"]
    assert (password["name"], password["key"]) == (f"{name}-app", "password"), label
