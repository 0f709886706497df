"""Two engines sharing the partitions' command streams on a Redis Cluster (issue #22): both ``souk engine`` processes
are consumers of the ``engine`` group of every partition's command stream; one is killed -9 while it holds
delivered, unanswered commands, and the other takes them over (XAUTOCLAIM after ``SOUK_RECLAIM_IDLE_MS``). Every
command is answered, accepted once, and each game's events are numbered 1, 2, 3... with no gap and no duplicate.

The games are driven like the pipeline benchmark's (commands XADDed to their partition's stream, answers on a reply
channel), closed loop per game as a client does, each command chosen by the game's bot on the game folded from its
events. A command without an answer after a few seconds is sent again with its id, as a client does (a killed
engine may have recorded a command and not yet published its answer): the engine answers a resend with the
recorded outcome, never deciding it twice."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import signal
import subprocess
import sys
import time
import uuid

import msgspec
import pytest
from redis.exceptions import ResponseError

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import bot_command, get_game
from services.cli.stores import check
from services.embedded.redis import die_with_parent
from services.engine.service import fold_with_since
from services.runtime.config import Settings
from services.store import clients, keys
from services.store.codec import encoder, reply_decoder
from services.store.events import RedisEventStore

pytestmark = [pytest.mark.cluster, pytest.mark.anyio]

GAMES, SEATS, MOVES = 24, 2, 30  # yspahan: CreateGame, 2 joins, then 30 bot commands a game (792 commands)
RECLAIM_MS = 1000


def cluster_url(cluster) -> str:
    return "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in cluster.addresses())


def _token_hash(game_id: str, seat: int) -> str:
    return hashlib.sha256(f"replicas-{game_id}-{seat}".encode()).hexdigest()


def start_engine(url: str, name: str, log) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url, "SOUK_VIEWS_REDIS_URL": url, "SOUK_PARTITIONS": "4",
           "SOUK_RECLAIM_IDLE_MS": str(RECLAIM_MS), "SOUK_CONSUMER": name, "SOUK_LOG_LEVEL": "warning"}
    return subprocess.Popen([sys.executable, "-m", "services.cli", "engine"], env=env, preexec_fn=die_with_parent,
                            stdout=log, stderr=subprocess.STDOUT)


async def test_an_engine_killed_mid_load_leaves_its_commands_to_the_other_which_answers_each_once(
        fresh_redis_cluster, monkeypatch, tmp_path):
    url = cluster_url(fresh_redis_cluster)
    monkeypatch.setenv("SOUK_PARTITIONS", "4")
    check(Settings.from_env(redis_url=url, views_redis_url=url))  # records 4 partitions; this process uses them
    assert len(keys.PARTITIONS) == 4
    logs = {name: open(tmp_path / f"{name}.log", "wb") for name in ("a", "b")}
    engines = {name: start_engine(url, name, log) for name, log in logs.items()}
    lean = clients.lean(url)
    store = RedisEventStore(clients.async_client(url))
    run_id = uuid.uuid4().hex[:8]
    channel = keys.replies(f"replicas-{run_id}")
    waiting: dict[str, asyncio.Future] = {}
    sent_ids: dict[str, str] = {}  # command id -> game id
    answers: dict[str, list] = {}  # command id -> every reply received for it

    def on_reply(_: bytes, data: bytes) -> None:
        reply = reply_decoder.decode(data)
        answers.setdefault(reply.command_id, []).append(reply)
        future = waiting.get(reply.command_id)
        if future is not None and not future.done():
            future.set_result(reply)

    replies = clients.subscriber(url, on_reply)
    await replies.start(channels=(channel,))
    resends = [0]
    # The test's own reads of the games' events, one at a time: 24 at once on a new redis-py RedisCluster client
    # once failed in its connect (AttributeError: '_writer' is None, redis/asyncio/connection.py), in this process,
    # not in the engines'.
    reading = asyncio.Lock()

    async def events_of(game_id: str, after: int = 0):
        async with reading:
            return await store.read(game_id, after=after)

    async def command(game_id: str, body, seat: int | None, token_hash: str | None, expected: int | None):
        command_id = f"{game_id}-{len(sent_ids)}"
        sent_ids[command_id] = game_id
        env = CommandEnvelope(command_id, game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                              token_hash=token_hash, reply_to=channel, sent_at=time.time(),
                              expected_version=expected)
        deadline = time.monotonic() + 25
        while True:
            future = waiting[command_id] = asyncio.get_running_loop().create_future()
            await lean.call("XADD", keys.commands(keys.partition(game_id)), "*", "c", encoder.encode(env))
            try:
                reply = await asyncio.wait_for(future, 4.0)
                break
            except asyncio.TimeoutError:  # no answer: sent again with its id, as a client does
                assert time.monotonic() < deadline, f"{command_id}: no answer"
                resends[0] += 1
        assert reply.status == "accepted", reply
        return reply

    async def play(game_id: str, rng: random.Random) -> None:
        game = get_game("yspahan")
        await command(game_id, CreateGame("yspahan", "replicas", SEATS, {}, rng.randbytes(32).hex(), unfair=True),
                      None, None, None)
        for s in range(SEATS):
            await command(game_id, JoinSeat(f"p{s}", _token_hash(game_id, s), s), s, None, None)
        table, since = fold_with_since(await events_of(game_id))
        for _ in range(MOVES):
            if table.status == tbl.OVER:
                return
            seat = rng.choice(tbl.flow(table).awaiting)
            reply = await command(game_id, bot_command(game, table.state, seat, rng), seat,
                                  _token_hash(game_id, seat), table.version)
            table, since = fold_with_since(await events_of(game_id, table.version), table, since)
            assert table.version == reply.version

    async def holding(consumer: str) -> list[bytes]:
        """The entry ids delivered to ``consumer`` and not acknowledged, on every partition's command stream."""
        held = []
        for p in keys.PARTITIONS:
            try:
                pending = await lean.call("XPENDING", keys.commands(p), keys.ENGINE_GROUP, "-", "+", 1000, consumer)
            except ResponseError as exc:  # the engines have not made their group yet
                assert str(exc).startswith("NOGROUP"), exc
                continue
            held += [(p, entry_id) for entry_id, *_ in pending]
        return held

    try:
        games = [uuid.uuid4().hex[:12] for _ in range(GAMES)]
        players = [asyncio.create_task(play(g, random.Random(i))) for i, g in enumerate(games)]
        # mid-load: once both engines have held commands and a third of the commands are answered, engine "a" is
        # killed -9 at a moment it holds commands it was delivered and has not answered
        seen, held_at_kill = set(), []
        kill_deadline = time.monotonic() + 20
        while time.monotonic() < kill_deadline:
            for name in ("a", "b"):
                if await holding(f"engine-{name}"):
                    seen.add(name)
            if seen == {"a", "b"} and len(answers) >= GAMES * (3 + MOVES) // 3:
                held_at_kill = await holding("engine-a")
                if held_at_kill:
                    os.kill(engines["a"].pid, signal.SIGKILL)
                    break
            await asyncio.sleep(0.002)
        assert held_at_kill, f"engine a never seen holding commands mid-load (seen: {seen}, answers: {len(answers)})"
        engines["a"].wait(5)
        held_ids = []
        for p, entry_id in held_at_kill:
            (_, fields), = await lean.call("XRANGE", keys.commands(p), entry_id, entry_id)
            held_ids.append(msgspec.json.decode(dict(zip(fields[::2], fields[1::2]))[b"c"])["command_id"])
        await asyncio.wait_for(asyncio.gather(*players), 30)

        assert engines["b"].poll() is None, "engine b stopped"
        for command_id in held_ids:  # what "a" held was answered (by "b", which reclaimed it)
            assert command_id in answers, command_id
        assert set(answers) == set(sent_ids)  # every command answered
        for p in keys.PARTITIONS:  # nothing left pending
            assert (await lean.call("XPENDING", keys.commands(p), keys.ENGINE_GROUP))[0] == 0
        for game_id in games:
            envelopes = await store.read(game_id)
            assert [e.seq for e in envelopes] == list(range(1, len(envelopes) + 1)), game_id  # no gap, no dup
            # each accepted command's events once, in the order the client sent them
            versions = {}
            for command_id, replies_of in answers.items():
                if sent_ids[command_id] == game_id:
                    assert {r.version for r in replies_of} == {replies_of[0].version}, replies_of  # one outcome
                    versions[command_id] = replies_of[0].version
            order = sorted(versions, key=lambda c: int(c.rsplit("-", 1)[1]))
            assert [versions[c] for c in order] == sorted(versions.values())
            assert len(set(versions.values())) == len(versions)
            assert envelopes[-1].seq == versions[order[-1]]
            by_command = {}
            for e in envelopes:
                by_command.setdefault(e.command_id, []).append(e.seq)
            assert set(by_command) == set(versions), game_id
            for command_id, seqs in by_command.items():
                assert seqs[-1] == versions[command_id] and seqs == list(range(seqs[0], seqs[-1] + 1))
    finally:
        for proc in engines.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        for log in logs.values():
            log.close()
        await replies.aclose()
        await lean.aclose()
        await store.redis.aclose()
        keys.use(1)
