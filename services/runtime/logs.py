"""structlog set-up: JSON lines (or console) with game_id, seat and command_id bound by the handlers."""

from __future__ import annotations

import logging
import sys

import structlog


LIBRARIES = "souk.lib"  # the stdlib logger handed to FastStream: its records go out as ours do


def configure(level: str = "info", fmt: str = "json") -> None:
    """structlog for Souk's own logs; the standard library's records (FastStream's, through ``LIBRARIES``, and
    any other library's) are rendered the same way, from WARNING up unless ``level`` is higher."""
    numeric = getattr(logging, level.upper(), logging.INFO)
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        foreign_pre_chain=[structlog.contextvars.merge_contextvars, structlog.stdlib.add_log_level,
                           structlog.stdlib.add_logger_name, stamp, structlog.processors.format_exc_info],
    ))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(numeric, logging.WARNING))
