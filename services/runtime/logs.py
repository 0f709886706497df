"""structlog set-up: JSON lines (or console) with game_id, seat and command_id bound by the handlers."""

from __future__ import annotations

import logging
import sys

import structlog


LIBRARIES = "souk.lib"  # the stdlib logger handed to FastStream: its records go out as ours do
REPEATS_WINDOW_S = 30.0  # a library's same message (and error) is printed at most once in this many seconds


class Repeats(logging.Filter):
    """Holds back a library's record that repeats one printed less than ``REPEATS_WINDOW_S`` ago (same logger,
    message and exception type): FastStream logs a traceback on each failed read, ten a second while Redis is
    away. The first goes out whole; the next one after the window carries ``repeated``, how many were held back."""

    def __init__(self, window: float = REPEATS_WINDOW_S) -> None:
        super().__init__()
        self.window = window
        self.seen: dict[tuple, list] = {}  # key -> [when last printed, how many held back since]

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[0] if record.exc_info else None
        key = (record.name, record.msg, exc)
        seen = self.seen.get(key)
        if seen is not None and record.created - seen[0] < self.window:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.repeated = seen[1]
        if len(self.seen) > 1000:  # bounded: messages that embed values are all different
            self.seen.clear()
        self.seen[key] = [record.created, 0]
        return True


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
                           structlog.stdlib.add_logger_name, structlog.stdlib.ExtraAdder(allow=("repeated",)), stamp,
                           structlog.processors.format_exc_info],
    ))
    handler.addFilter(Repeats())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(numeric, logging.WARNING))
