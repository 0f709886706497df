"""`souk bot` against a real `souk serve` and Redis: `--fill` plays every seat of a game of each title to its end
(1001 Karawane with the artifact seeker), and one seat played by a `souk bot` process beside a seat the test plays
as a person would, through the SDK."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys

import pytest

from services.client import SoukClient, SoukError

pytestmark = pytest.mark.anyio


def souk_bot(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "services.cli", "bot", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


async def finished(process: subprocess.Popen, timeout: float) -> tuple[str, str]:
    try:
        out, err = await asyncio.to_thread(process.communicate, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"souk bot did not finish in {timeout} s:\n{out[-3000:]}\n{err[-3000:]}") from None
    assert process.returncode == 0, f"souk bot failed ({process.returncode}):\n{out[-3000:]}\n{err[-3000:]}"
    return out, err


async def play_as_a_person(person, rng: random.Random, timeout: float = 600) -> int:
    """Plays ``person``'s seat at random from its WebSocket, as a person would, until the game ends (a command the
    game moved past is refused ``stale``: the next view says what to do); returns how many commands it sent."""
    sent = 0

    async def play() -> None:
        nonlocal sent
        async for view in person.follow():
            if view.status == "playing" and person.seat in view.flow.awaiting and view.legal:
                try:
                    await person.send(rng.choice(view.legal), expected_version=view.version)
                    sent += 1
                except SoukError as exc:
                    assert exc.code == "stale", exc

    await asyncio.wait_for(play(), timeout)
    return sent


@pytest.mark.parametrize(("game", "seats", "strategy"), [
    ("karawane", 2, "seeker"), ("yspahan", 2, "greedy"), ("samarkand", 3, "greedy"), ("istanbul", 2, "greedy"),
])
async def test_souk_bot_fill_joins_every_free_seat_and_plays_the_game_to_its_end(souk_url, game, seats, strategy):
    """Each game seeded, and --seed gives the seats' entropy too: the same game at every run (a random 1001 Karawane
    desert may take the seekers thousands of commands, too long for a busy machine)."""
    async with SoukClient(souk_url) as souk:
        created = await souk.create(game, f"bots {game}", seats, seed=f"{3:064x}", unfair=True)
        process = souk_bot("--fill", created.game_id, "--strategy", strategy, "--samples", "1", "--seed", "3",
                           "--server", souk_url)
        out, err = await finished(process, 600)
        assert "bot_fallback" not in err, err  # every choice was the strategy's, in a state built from a view
        lines = out.strip().splitlines()
        summary = json.loads(lines[-1])
        assert summary["status"] == "over" and summary["seats"] == list(range(seats)) and summary["winners"], summary
        moves = [line for line in lines[:-1] if line.startswith("v")]
        final = await souk.view(created.game_id)
        assert final.status == "over" and final.result is not None
        assert [s.name for s in final.seats] == [f"bot {n}" for n in range(1, seats + 1)]
        assert summary["version"] == final.version and len(moves) > seats
        entry = await souk.game(created.game_id)
        assert entry.status == "over"


@pytest.mark.parametrize("follow", [[], ["--poll"]], ids=["websocket", "poll"])
async def test_a_seat_played_by_souk_bot_beside_a_seat_played_by_the_test(souk_url, follow):
    """Seat 0 is the test's, playing at random from its WebSocket as a person would; seat 1 was joined by the test
    too and handed to a `souk bot` process with its token (following its WebSocket, or polling its view). The game
    ends, each seat having moved, the bot's moves all its seat's."""
    async with SoukClient(souk_url) as souk:
        created = await souk.create("yspahan", "a person and a bot", 2)
        person = await souk.join(created.game_id, "a person")
        machine = await souk.join(created.game_id, "the bot")
        process = souk_bot(created.game_id, "--seat", str(machine.seat), "--token", machine.token,
                           "--strategy", "greedy", "--samples", "1", "--server", souk_url, *follow)
        try:
            mine = await play_as_a_person(person, random.Random(5))
            out, err = await finished(process, 60)
            assert "bot_fallback" not in err, err
        finally:
            if process.poll() is None:
                process.kill()
        summary = json.loads(out.strip().splitlines()[-1])
        final = await souk.view(created.game_id)
        assert final.status == "over" and summary["status"] == "over" and summary["seats"] == [machine.seat]
        theirs = [line for line in out.splitlines() if line.startswith("v")]
        assert mine > 5 and len(theirs) > 5
        assert all(line.split()[2] == f"{machine.seat}:" for line in theirs)


async def test_a_souk_bot_killed_in_the_middle_of_a_game_and_started_again_plays_on_to_the_end(souk_url):
    """Each seat of a 1001 Karawane game played by its own `souk bot` process (the tokens from the test's joins),
    both killed (SIGKILL) once the game is some moves in; two new processes with the same tokens go on from the views
    as they are (a command the killed one sent at a view is sent again with the same id: answered, not applied
    twice), and the game ends. The desert is seeded (no seat's entropy) and so are the bots' choices: a random
    desert's game may take the seekers thousands of commands (README, Bots), too long for the test on a busy
    machine; this one ends in a few hundred."""
    async with SoukClient(souk_url) as souk:
        created = await souk.create("karawane", "killed and back", 2, seed=f"{7:064x}", unfair=True)
        seats = [await souk.join(created.game_id, f"seat {n}", entropy="") for n in range(2)]

        def start(seat):
            return souk_bot(created.game_id, "--seat", str(seat.seat), "--token", seat.token, "--strategy", "seeker",
                            "--seed", str(seat.seat), "--server", souk_url)

        first = [start(s) for s in seats]
        for _ in range(600):  # until the game is some moves in
            if (await souk.view(created.game_id)).version > 40:
                break
            await asyncio.sleep(0.05)
        for process in first:
            process.kill()
            await asyncio.to_thread(process.wait)
        middle = await souk.view(created.game_id)
        assert middle.status == "playing", "the game ended before the kill: nothing was checked"
        again = [start(s) for s in seats]
        outs = [(await finished(p, 600))[0] for p in again]
        final = await souk.view(created.game_id)
        assert final.status == "over" and final.version > middle.version
        assert all(json.loads(out.strip().splitlines()[-1])["status"] == "over" for out in outs)


async def test_souk_bot_ends_in_one_line_on_a_wrong_token_or_a_game_with_no_free_seat(souk_url):
    async with SoukClient(souk_url) as souk:
        created = await souk.create("yspahan", "full", 2)
        for n in range(2):
            await souk.join(created.game_id, f"player {n}")
        wrong = souk_bot(created.game_id, "--seat", "0", "--token", "not-the-token", "--server", souk_url)
        full = souk_bot("--fill", created.game_id, "--server", souk_url)
        for process, code in ((wrong, "401"), (full, "no_free_seat")):
            out, err = await asyncio.to_thread(process.communicate, timeout=60)
            assert process.returncode == 1 and "Traceback" not in err, err
            assert err.startswith("souk: bot:") and code in err and len(err.strip().splitlines()) == 1, err


async def test_souk_bot_fill_takes_the_seats_a_person_left_free_and_plays_them_beside_that_person(souk_url):
    async with SoukClient(souk_url) as souk:
        created = await souk.create("samarkand", "one person, two bots", 3)
        person = await souk.join(created.game_id, "a person", seat=1)
        process = souk_bot("--fill", created.game_id, "--strategy", "greedy", "--samples", "1", "--server", souk_url)
        try:
            mine = await play_as_a_person(person, random.Random(8))
            out, err = await finished(process, 60)
        finally:
            if process.poll() is None:
                process.kill()
        assert "bot_fallback" not in err, err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["status"] == "over" and summary["seats"] == [0, 2]
        final = await souk.view(created.game_id)
        assert [s.name for s in final.seats] == ["bot 1", "a person", "bot 2"] and final.status == "over"
        assert mine > 3


async def joined_entropies(souk: SoukClient, game_id: str) -> list[str]:
    page = await souk.history(game_id, after=0, limit=20)
    return [e.event.entropy for e in page.entries if e.type == "table.SeatJoined"]


async def test_souk_bot_fill_with_a_seed_gives_its_seats_the_same_entropy_at_every_run(souk_url):
    """Two games of the same seed, each filled by `souk bot --fill --seed 5` (stopped once the game started): the
    seats joined with the same entropy, so the two games deal the same chance; another seed, another entropy."""
    async with SoukClient(souk_url) as souk:
        found = []
        for seed in ("5", "5", "6"):
            created = await souk.create("yspahan", "seeded", 2, seed=f"{5:064x}", unfair=True)
            process = souk_bot("--fill", created.game_id, "--seed", seed, "--quiet", "--server", souk_url)
            try:
                for _ in range(600):
                    if (await souk.game(created.game_id)).status != "open":
                        break
                    await asyncio.sleep(0.05)
            finally:
                process.kill()
                await asyncio.to_thread(process.communicate)
            found.append(await joined_entropies(souk, created.game_id))
        assert len(found[0]) == 2 and all(len(e) == 64 for e in found[0]) and found[0][0] != found[0][1]
        assert found[0] == found[1] and found[2] != found[0]
