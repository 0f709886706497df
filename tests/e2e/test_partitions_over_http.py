"""A store of four partitions (SOUK_PARTITIONS=4, recorded when `souk serve` creates it): games land in several
partitions, each game's keys and commands in its own, and whole games are played over HTTP in order."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys

import httpx
import pytest
import redis

from services.cli.stores import ROLE
from services.store import keys
from tests.e2e.support import join_all, partitioned
from tests.e2e.test_play_over_http import play_to_the_end

pytestmark = pytest.mark.anyio


souk_env = partitioned(4)


async def test_games_of_four_partitions_are_played_over_http_each_in_its_partition_in_order(souk_url, redis_url):
    events = redis.Redis.from_url(redis_url, decode_responses=True)
    assert events.hget(ROLE, "partitions") == "4"  # recorded at the store's creation
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        game_ids = []
        while len({keys.partition(g) for g in game_ids}) < 3:  # games in at least three partitions
            r = await client.post("/games", json={"game": "samarkand", "title": "p", "seats": 3})
            assert r.status_code == 201, r.text
            game_ids.append(r.json()["game_id"])
        played = game_ids[-3:]
        tokens = [await join_all(client, g, 3) for g in played]
        counts = await asyncio.gather(*(play_to_the_end(client, g, t, random.Random(n))
                                        for n, (g, t) in enumerate(zip(played, tokens))))
        for game_id, count in zip(played, counts):
            partition = keys.partition(game_id)
            final = (await client.get(f"/games/{game_id}/view")).json()
            assert final["status"] == "over" and count > 2
            assert events.xlen(keys.game_stream(game_id)) == final["version"]
            assert events.zscore(keys.games(partition), game_id) is not None
            assert all(events.zscore(keys.games(p), game_id) is None for p in keys.PARTITIONS if p != partition)
            history: list[dict] = []
            while len(history) < final["version"]:
                page = await client.get(f"/games/{game_id}/history", params={"after": len(history), "limit": 500})
                history += page.json()["entries"]
            assert [e["seq"] for e in history] == list(range(1, final["version"] + 1))
            done = subprocess.run([sys.executable, "-m", "services.cli", "verify", game_id, "--server", souk_url],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0 and "holds" in done.stdout, done.stdout + done.stderr
    # each partition a game was played in got its commands and its events in its own streams
    for partition in {keys.partition(g) for g in played}:
        assert events.exists(keys.commands(partition))  # its entries may be trimmed already, not the stream
        assert events.xlen(keys.events(partition)) > 0
    assert not events.exists("souk:commands", "souk:events", "souk:games")  # nothing in the old layout
