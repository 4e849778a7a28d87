"""Matchmaking's tests on both server models (``asyncio``, its default, and ``threads``).

The conftest of the folder holding matchmaking's service tests calls :func:`parametrize` from
``pytest_generate_tests`` and import :func:`mm_server_model` (an
autouse fixture): each test of the files :func:`covers` names runs once per model, a module's
tests grouped by model. Nothing in the tests themselves changes:

* matchmaking served in-process (``tests.support.grpc_server.serving``) gets the model in its
  Config unless the test chose one. On the asyncio model it also gets, unless the test set
  ``max_streams``, the stream limit the threaded model has with its ``max_workers``
  (:func:`infra.interceptor.stream_limit`), so a test of the stream limit checks the same numbers on
  both models (the asyncio model's limit is ``--max-streams``, not its threads);
* matchmaking processes (``mahjong serve matchmaking``) get it from the environment
  (``MAHJONG_MATCHMAKING_SERVER_MODEL``); the module-scoped fixtures of a test module (a stack
  of processes started once per module) are made again for each model.

A module may narrow the models with ``SERVER_MODELS = ("asyncio",)``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from infra.interceptor import stream_limit
from tests.support import grpc_server

MODELS = ("asyncio", "threads")
ENV = "MAHJONG_MATCHMAKING_SERVER_MODEL"
TESTS = Path(__file__).resolve().parents[1]
COVERED = ("service/matchmaking/", "service/test_service_authorization.py")
# The integration tests (stacks of processes, the suite's slowest) run on the default model
# alone: the service tests above cover both models in-process, within the suite's budget.
COVERED_FILES: tuple[str, ...] = ()


def covers(path: Path) -> bool:
    """Whether the tests of ``path`` run on both models."""
    try:
        rel = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return False
    return rel.startswith(COVERED) or bool(COVERED_FILES and rel.startswith(COVERED_FILES))


def _module_fixtures(metafunc: pytest.Metafunc) -> list[str]:
    """The module-scoped fixtures the test module defines itself (made again per model)."""
    module_id = metafunc.definition.nodeid.split("::")[0]
    names = []
    for name in metafunc.fixturenames:
        defs = getattr(metafunc, "_arg2fixturedefs", {}).get(name) or ()
        if any(d.scope == "module" and d.baseid == module_id for d in defs):
            names.append(name)
    return names


def parametrize(metafunc: pytest.Metafunc) -> None:
    """``pytest_generate_tests``: a covered test once per server model."""
    if "mm_server_model" not in metafunc.fixturenames or not covers(metafunc.definition.path):
        return
    models = getattr(metafunc.module, "SERVER_MODELS", MODELS)
    names = ["mm_server_model", *_module_fixtures(metafunc)]
    values = [pytest.param(*[m] * len(names), id=m) for m in models]
    metafunc.parametrize(names, values, indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def mm_server_model(request):
    """The server model matchmaking runs on in this module's tests (None: not parametrized)."""
    model = getattr(request, "param", None)
    if model is None:
        yield None
        return
    real_start = grpc_server.start

    def start(spec, config=None):
        if spec.name == "matchmaking" and config is not None and not config.server_model:
            limit = config.max_streams
            if model == "asyncio" and not limit:
                limit = stream_limit(config.max_workers)
            config = dataclasses.replace(config, server_model=model, max_streams=limit)
        return real_start(spec, config)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV, model)
        mp.setattr(grpc_server, "start", start)
        yield model
