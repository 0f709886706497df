"""structlog set-up: JSON lines (or console) with game_id, seat and command_id bound by the handlers.

The handlers bind what each line of a request or a command carries with ``bound`` (a ``with`` block) or ``bind``
then ``clear`` (a loop): one context variable holding a dict, merged into every line by ``merge_context``.
structlog's own ``bound_contextvars`` makes a context variable per key and reads them all back from a copy of the
context each time: 5.4 µs a block of three keys against 0.6, twice on every command in the gateway and once per
command in the engine (the projector binds only when it logs at debug level).
"""

from __future__ import annotations

import contextvars
import logging
import sys
from typing import Any

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


_CONTEXT: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("souk_log_context", default=None)


class bound:  # noqa: N801 - used as a context manager, like structlog's bound_contextvars
    """``with bound(game_id=..., seat=...):`` every line logged inside carries these keys (a line's own keys win)."""

    __slots__ = ("_token", "_values")

    def __init__(self, **values: Any) -> None:
        self._values = values
        self._token: contextvars.Token | None = None

    def __enter__(self) -> None:
        outer = _CONTEXT.get()
        self._token = _CONTEXT.set({**outer, **self._values} if outer else self._values)

    def __exit__(self, *_: object) -> None:
        _CONTEXT.reset(self._token)


def bind(**values: Any) -> None:
    """Every line logged from now on in this context carries these keys, until ``clear``."""
    outer = _CONTEXT.get()
    _CONTEXT.set({**outer, **values} if outer else values)


def clear() -> None:
    _CONTEXT.set(None)


def merge_context(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """The structlog processor that adds what ``bound`` and ``bind`` hold."""
    context = _CONTEXT.get()
    return {**context, **event_dict} if context else event_dict


def configure(level: str = "info", fmt: str = "json") -> None:
    """structlog for Souk's own logs; the standard library's records (FastStream's, through ``LIBRARIES``, and
    any other library's) are rendered the same way, from WARNING up unless ``level`` is higher."""
    numeric = getattr(logging, level.upper(), logging.INFO)
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            merge_context,
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
        foreign_pre_chain=[structlog.contextvars.merge_contextvars, merge_context, structlog.stdlib.add_log_level,
                           structlog.stdlib.add_logger_name, structlog.stdlib.ExtraAdder(allow=("repeated",)), stamp,
                           structlog.processors.format_exc_info],
    ))
    handler.addFilter(Repeats())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(numeric, logging.WARNING))
