"""A worker's stop never waits forever (``services.runtime.loop.stop_task``): a ``souk serve`` was once found alive
long after its SIGTERM, its shutdown awaiting a task that never ended."""

from __future__ import annotations

import asyncio
import time

from services.runtime.loop import stop_task


def test_a_task_that_ends_when_cancelled_is_stopped_at_once():
    async def main():
        task = asyncio.create_task(asyncio.sleep(3600))
        await asyncio.sleep(0)
        started = time.monotonic()
        assert await stop_task(task, "sleeper", timeout=5.0)
        return time.monotonic() - started, task.cancelled()

    took, cancelled = asyncio.run(main())
    assert cancelled and took < 1.0


def test_a_task_that_swallows_its_cancellation_is_left_behind_after_the_timeout():
    async def stubborn():
        for _ in range(2):  # stop_task's two cancellations are lost, as one lost in asyncio.wait_for is
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue
        await asyncio.sleep(3600)  # the test's own last cancellation ends it

    async def main():
        task = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        started = time.monotonic()
        stopped = await stop_task(task, "stubborn", timeout=0.4)
        took = time.monotonic() - started
        task.cancel()
        await asyncio.wait({task})
        return stopped, took

    stopped, took = asyncio.run(main())
    assert not stopped and 0.3 < took < 2.0


def test_a_task_that_failed_is_stopped_and_its_error_not_raised():
    async def failing():
        raise RuntimeError("boom")

    async def main():
        task = asyncio.create_task(failing())
        await asyncio.sleep(0.01)
        return await stop_task(task, "failing")

    assert asyncio.run(main())
