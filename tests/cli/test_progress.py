"""Progress on stderr: only on a terminal unless asked for; lines when asked for away from a terminal."""

from __future__ import annotations

import asyncio

from services.runtime.progress import Progress, wait


def test_progress_is_silent_away_from_a_terminal_unless_asked_for(capsys):
    with Progress(3, "projecting games") as bar:
        for _ in range(3):
            bar.advance()
    assert capsys.readouterr().err == ""
    with Progress(3, "projecting games", enabled=True, every_s=0) as bar:
        for _ in range(3):
            bar.advance()
    assert capsys.readouterr().err.splitlines()[-1] == "projecting games: 3/3 (100%)"


def test_a_measuring_run_waits_its_seconds_and_shows_them_gone(capsys):
    loop_time = asyncio.run(_timed(wait(0.5, "measuring", enabled=True)))
    assert 0.45 <= loop_time < 2.0
    assert capsys.readouterr().err.splitlines()[-1] == "measuring (0.5 s): 2/2 (100%)"


async def _timed(coro) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    await coro
    return loop.time() - start
