"""The process's logs: structlog JSON lines on stderr, with the context variables a call
binds (rpc, peer, table, hand, seat) merged into every line, and the ``trace_id`` and
``span_id`` of the span in progress when tracing is on (:mod:`infra.tracing`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from infra.tracing import add_trace_ids

_logging_done = False


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """structlog JSON lines on stderr, with context variables (rpc, table, hand, seat) merged."""
    global _logging_done
    lvl = logging.getLevelName(level.upper())
    if not isinstance(lvl, int):
        lvl = logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_trace_ids,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    _logging_done = True


def logging_configured() -> bool:
    """Whether :func:`configure_logging` ran in this process."""
    return _logging_done
