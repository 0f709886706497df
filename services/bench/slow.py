"""``souk bench slow``: what one client address can hold open on a gateway by trickling request heads (issue #18
item 7, slowloris).

``--sockets`` connections from this process (one address), opened evenly over the first ``--every`` seconds,
each send a request line, then one header line every
``--every`` seconds and never the blank line that ends the head. A connection the gateway answers (408
``request_timeout`` once ``SOUK_HEAD_TIMEOUT_S`` is up, 429 ``too_many_connections`` past
``SOUK_CONNECTIONS_PER_CLIENT``) or closes is opened again after ``--pause`` seconds, as an attacker would. Every
half second after the first two the number of
connections the gateway holds (connected, nothing answered yet) is sampled; printed: the most held at once, the
mean over the run, the longest a connection was held, and the answers by status; with its own ``souk serve``,
also how many more files (sockets) than at the start the server process had open (``/proc/PID/fd``): what the
gateway holds, whatever waits in the listen backlog.

Against ``--url`` (a gateway already running), else a ``souk serve`` of its own on redis-servers of its own (its
default settings, or those in the environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from typing import Any


async def _slot(host: str, port: int, every: float, pause: float, end: float, state: dict[str, Any],
                delay: float) -> None:
    """One connection trickling its head, opened again whenever the gateway answers or drops it."""
    await asyncio.sleep(delay)
    while time.monotonic() < end:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
        except (OSError, asyncio.TimeoutError):
            state["answers"]["not_connected"] += 1
            await asyncio.sleep(pause)
            continue
        state["held"] += 1
        opened, answered = time.monotonic(), None
        try:
            writer.write(b"GET /catalog HTTP/1.1\r\nHost: souk\r\n")
            line = 0
            while time.monotonic() < end:
                try:
                    data = await asyncio.wait_for(reader.read(65536), every)
                except asyncio.TimeoutError:
                    writer.write(b"X-Slow-%d: 1\r\n" % line)
                    line += 1
                    continue
                answered = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed"
                break
        except (OSError, IndexError):
            answered = "reset"
        finally:
            state["held"] -= 1
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        if answered is not None:
            state["answers"][answered] += 1
            state["held_s"].append(time.monotonic() - opened)
            await asyncio.sleep(pause)


WARMUP_S = 2.0  # not sampled: the start


def _open_fds(pid: int | None) -> int | None:
    """The files (sockets included) the process has open, from /proc (None: not known)."""
    if pid is None:
        return None
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


async def measure(url: str, sockets: int, every: float, seconds: float, pause: float,
                  pid: int | None = None) -> dict[str, Any]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    state: dict[str, Any] = {"held": 0, "answers": Counter(), "held_s": []}
    baseline = _open_fds(pid)
    fds: list[int] = []
    end = time.monotonic() + seconds
    tasks = [asyncio.create_task(_slot(host, int(port), every, pause, end, state, i * every / sockets))
             for i in range(sockets)]  # opened evenly over the first --every seconds
    samples, start = [], time.monotonic()
    while time.monotonic() < end:
        await asyncio.sleep(0.5)
        if time.monotonic() - start >= WARMUP_S:
            samples.append(state["held"])
            now = _open_fds(pid)
            if now is not None and baseline is not None:
                fds.append(now - baseline)
    await asyncio.gather(*tasks, return_exceptions=True)
    held_s = sorted(state["held_s"])
    return {"sockets": sockets, "every_s": every, "seconds": seconds, "most_held": max(samples, default=0),
            "mean_held": round(sum(samples) / max(len(samples), 1), 1), "held_at_end": samples[-1] if samples else 0,
            "gateway_sockets_most": max(fds) if fds else None,
            "gateway_sockets_mean": round(sum(fds) / len(fds), 1) if fds else None,
            "answers": dict(state["answers"]),
            "longest_held_s": round(held_s[-1], 2) if held_s else None}


@contextlib.contextmanager
def serve() -> Any:
    """A ``souk serve`` of its own (on redis-servers of its own, ``services.bench.http.Cluster``) with its limits as
    the environment or the defaults set them: yields its URL and its process id."""
    from services.bench.http import Cluster

    cluster = Cluster("serve", "always", None, limits=True)
    try:
        yield cluster.start(), cluster.procs["serve"].pid
    finally:
        cluster.stop()
