"""Several ``souk engine`` processes on one store, and games driven through them as the pipeline benchmark drives
them (commands XADDed to their partition's stream, answers on a reply channel), closed loop per game as a client
does, each command chosen by the game's bot on the game folded from its events. A command without an answer after a
few seconds is sent again with its id, as a client does (a killed engine may have recorded a command and not yet
published its answer): the engine answers a resend with the recorded outcome, never deciding it twice.

Shared by tests/services/test_engine_owners.py (one Redis) and tests/cluster/test_engine_replicas_on_cluster.py."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import subprocess
import sys
import time
import uuid

import msgspec
from redis.exceptions import ResponseError

from contracts.envelope import CommandEnvelope
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.kernel import bot_command, get_game
from services.embedded.redis import die_with_parent
from services.engine.service import fold_with_since
from services.store import clients, keys
from services.store.codec import encoder, reply_decoder
from services.store.events import RedisEventStore

SEATS = 2  # yspahan: CreateGame, 2 joins, then the bot's commands


def start_engine(url: str, name: str, log, **env: str) -> subprocess.Popen:
    """``souk engine`` with consumer ``engine-<name>`` on a store of 4 partitions; ``env``: more settings."""
    return start_worker(url, "engine", name, log, **env)


def start_worker(url: str, role: str, name: str, log, **env: str) -> subprocess.Popen:
    """``souk <role>`` (engine, projector) with consumer ``<role>-<name>`` on a store of 4 partitions; ``env``: more
    settings."""
    env = {**os.environ, "REDIS_URL": url, "SOUK_VIEWS_REDIS_URL": url, "SOUK_PARTITIONS": "4",
           "SOUK_CONSUMER": name, "SOUK_LOG_LEVEL": "info", **env}
    return subprocess.Popen([sys.executable, "-m", "services.cli", role], env=env, preexec_fn=die_with_parent,
                            stdout=log, stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _token_hash(game_id: str, seat: int) -> str:
    return hashlib.sha256(f"replicas-{game_id}-{seat}".encode()).hexdigest()


class Players:
    """Games played through the engines, every answer kept (``answers``), and the checks of what they left."""

    def __init__(self, url: str, answer_s: float = 4.0) -> None:
        self.lean = clients.lean(url)
        self.store = RedisEventStore(clients.async_client(url))
        self.channel = keys.replies(f"replicas-{uuid.uuid4().hex[:8]}")
        self.answer_s = answer_s
        self.waiting: dict[str, asyncio.Future] = {}
        self.sent_ids: dict[str, str] = {}  # command id -> game id
        self.answers: dict[str, list] = {}  # command id -> every reply received for it
        self.resends = 0
        self.replies = clients.subscriber(url, self._on_reply)
        # The reads of the games' events, one at a time: 24 at once on a new redis-py RedisCluster client once
        # failed in its connect (AttributeError: '_writer' is None, redis/asyncio/connection.py).
        self.reading = asyncio.Lock()

    async def start(self) -> Players:
        await self.replies.start(channels=(self.channel,))
        return self

    async def aclose(self) -> None:
        await self.replies.aclose()
        await self.lean.aclose()
        await self.store.redis.aclose()

    def _on_reply(self, _: bytes, data: bytes) -> None:
        reply = reply_decoder.decode(data)
        self.answers.setdefault(reply.command_id, []).append(reply)
        future = self.waiting.get(reply.command_id)
        if future is not None and not future.done():
            future.set_result(reply)

    async def events_of(self, game_id: str, after: int = 0):
        async with self.reading:
            return await self.store.read(game_id, after=after)

    async def command(self, game_id: str, body, seat: int | None, token_hash: str | None, expected: int | None):
        command_id = f"{game_id}-{len(self.sent_ids)}"
        self.sent_ids[command_id] = game_id
        env = CommandEnvelope(command_id, game_id, msgspec.Raw(encoder.encode(body)), seat=seat,
                              token_hash=token_hash, reply_to=self.channel, sent_at=time.time(),
                              expected_version=expected)
        deadline = time.monotonic() + 25
        while True:
            future = self.waiting[command_id] = asyncio.get_running_loop().create_future()
            await self.lean.call("XADD", keys.commands(keys.partition(game_id)), "*", "c", encoder.encode(env))
            try:
                reply = await asyncio.wait_for(future, self.answer_s)
                break
            except asyncio.TimeoutError:  # no answer: sent again with its id, as a client does
                assert time.monotonic() < deadline, f"{command_id}: no answer"
                self.resends += 1
        assert reply.status == "accepted", reply
        return reply

    async def play(self, game_id: str, rng: random.Random, moves: int) -> None:
        game = get_game("yspahan")
        await self.command(game_id, CreateGame("yspahan", "replicas", SEATS, {}, rng.randbytes(32).hex(),
                                               unfair=True), None, None, None)
        for s in range(SEATS):
            await self.command(game_id, JoinSeat(f"p{s}", _token_hash(game_id, s), s), s, None, None)
        table, since = fold_with_since(await self.events_of(game_id))
        for _ in range(moves):
            if table.status == tbl.OVER:
                return
            seat = rng.choice(tbl.flow(table).awaiting)
            reply = await self.command(game_id, bot_command(game, table.state, seat, rng), seat,
                                       _token_hash(game_id, seat), table.version)
            table, since = fold_with_since(await self.events_of(game_id, table.version), table, since)
            assert table.version == reply.version

    async def holding(self, consumer: str) -> list[tuple[int, bytes]]:
        """The entries delivered to ``consumer`` and not acknowledged, on every partition's command stream."""
        held = []
        for p in keys.PARTITIONS:
            try:
                pending = await self.lean.call("XPENDING", keys.commands(p), keys.ENGINE_GROUP, "-", "+", 1000,
                                               consumer)
            except ResponseError as exc:  # the engines have not made their group yet
                assert str(exc).startswith("NOGROUP"), exc
                continue
            held += [(p, entry_id) for entry_id, *_ in pending]
        return held

    async def command_ids(self, held: list[tuple[int, bytes]]) -> list[str]:
        """The command ids of entries of the command streams."""
        out = []
        for p, entry_id in held:
            (_, fields), = await self.lean.call("XRANGE", keys.commands(p), entry_id, entry_id)
            out.append(msgspec.json.decode(dict(zip(fields[::2], fields[1::2]))[b"c"])["command_id"])
        return out

    async def check(self, games: list[str]) -> None:
        """Every command answered with one outcome, nothing left pending, and each game's events numbered 1, 2, 3...
        (no gap, no duplicate), each accepted command's events once, in the order the client sent them."""
        assert set(self.answers) == set(self.sent_ids)
        for p in keys.PARTITIONS:
            assert (await self.lean.call("XPENDING", keys.commands(p), keys.ENGINE_GROUP))[0] == 0
        for game_id in games:
            envelopes = await self.store.read(game_id)
            assert [e.seq for e in envelopes] == list(range(1, len(envelopes) + 1)), game_id
            versions = {}
            for command_id, replies_of in self.answers.items():
                if self.sent_ids[command_id] == game_id:
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
