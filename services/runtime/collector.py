"""Python's garbage collector, set for long-running servers (every `souk` process that serves: serve, gateway,
engine, projector).

CPython runs a young-generation collection every 700 allocations and, every so often, a full one that walks every
object the process holds: the gateway's and the projector's caches, the app, the games' data, tens of thousands of
objects. Those full passes stop the event loop for tens of milliseconds, and every command in flight waits: the
tail of the latency. Objects made at start-up are frozen out of the collector (``gc.freeze``: they live as long as
the process), and collections run less often (``THRESHOLDS``). Memory freed by reference counting (nearly all of
it: requests, views, events) is unaffected; only reference cycles wait longer to be collected.

Measured with `souk bench http --target split --games 64 --rate 1000 --drivers 2 --seconds 10` on 2026-11-26,
interleaved pairs on a machine with other work (load average 1.2 to 2.6): the thresholds alone (four pairs), p99
179 / 188 / 132 / 140 ms before, 135 / 59 / 66 / 89 ms after; this module as committed (two pairs), 124 / 163 ms
before, 89 / 95 ms after; 795–997 commands/s either way.
"""

from __future__ import annotations

import gc

THRESHOLDS = (100_000, 50, 1_000)  # allocations before a young collection; young ones before a middle; middle before a full


def tune() -> None:
    """Called once a serving process has built what it keeps (before it serves)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
