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


async def stop_task(task, name: str, timeout: float = 5.0) -> bool:
    """Cancels ``task`` and waits at most ``timeout`` seconds for it to end; True if it ended. A task that swallowed
    its cancellation (Python 3.11's ``asyncio.wait_for`` returns the result when the awaited future completes at
    the moment the task is cancelled) is cancelled again, then left behind with a warning: a worker's stop, and so
    a process's shutdown, never waits forever (seen once: ``souk serve`` alive long after its SIGTERM)."""
    import asyncio

    import structlog

    for _ in range(2):
        if task.done():
            break
        task.cancel()
        await asyncio.wait({task}, timeout=timeout / 2)
    if not task.done():
        structlog.get_logger("souk.runtime").warning("task_did_not_stop", task=name, waited_s=timeout)
        return False
    if not task.cancelled() and task.exception() is not None:
        structlog.get_logger("souk.runtime").warning("task_failed", task=name, error=repr(task.exception())[:200])
    return True
