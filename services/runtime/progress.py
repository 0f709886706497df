"""Progress on stderr for long work: click's bar on a terminal; when asked for elsewhere (``--progress``), a line
every few seconds; nothing otherwise (``--no-progress``, or not a terminal)."""

from __future__ import annotations

import asyncio
import sys
import time

import click


class Progress:
    """``with Progress(total, label, enabled) as bar: ... bar.advance()``. ``enabled`` None: on a terminal only."""

    def __init__(self, total: int, label: str, enabled: bool | None = None, every_s: float = 2.0) -> None:
        self.total = max(total, 0)
        self.label = label
        self.done = 0
        self.terminal = sys.stderr.isatty()
        self.enabled = self.terminal if enabled is None else enabled
        self.every_s = every_s
        self._bar = None
        self._last = 0.0

    def __enter__(self) -> Progress:
        if self.enabled and self.terminal:
            self._bar = click.progressbar(length=self.total, label=self.label, file=sys.stderr, show_pos=True)
            self._bar.__enter__()
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.enabled and time.monotonic() - self._last >= self.every_s:
            self._line()

    def _line(self) -> None:
        self._last = time.monotonic()
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        click.echo(f"{self.label}: {self.done}/{self.total}{share}", err=True)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif self.enabled and exc[0] is None:
            self._line()


async def wait(seconds: float, label: str, enabled: bool | None = None) -> None:
    """``asyncio.sleep(seconds)`` with a bar of the seconds gone (a benchmark's measuring run)."""
    steps = max(1, round(seconds * 4))
    with Progress(steps, f"{label} ({seconds:g} s)", enabled) as bar:
        start = time.monotonic()
        for step in range(1, steps + 1):
            await asyncio.sleep(max(0.0, start + seconds * step / steps - time.monotonic()))
            bar.advance()
