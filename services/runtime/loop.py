"""``run(coro)``: asyncio.run on uvloop where it is installed (it cuts the event loop's share of each command);
what every command of ``souk`` and every tool runs its coroutine with."""

from __future__ import annotations


def run(coro):
    """asyncio.run on uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(coro)
    return uvloop.run(coro)
