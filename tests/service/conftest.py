"""Matchmaking's service tests run on both server models (tests/support/server_models.py)."""

from __future__ import annotations

from tests.support.server_models import mm_server_model, parametrize

__all__ = ["mm_server_model"]


def pytest_generate_tests(metafunc):
    parametrize(metafunc)
