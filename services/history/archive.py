"""Archiving (``souk archive --older-than DURATION [--out DIR]``, services/cli/archive.py): finished games out of
Redis, into record files.

Each finished game (over or cancelled) whose last event is older than DURATION is written to
``DIR/{game_id}.souk.json`` (``services.history.record``, with the game's commands), the file is read back and
verified (its hash chain, seed and commitments, its events folded by the rules, its commands re-run by the rules
when it has them, and the same events as the game stream), and only then are
the game's hot keys removed: its stream, outcomes (and its refusals' entries in ``souk:refusals``), chain head,
seed and engine snapshot in the event store (in one transaction that also leaves its tombstone), then its views, history, snapshots, position, seat tokens and lobby entry in the read store. A game
whose file does not verify is left as it was (and named).

The tombstone (``souk:archived``, a hash: game id -> ``Tombstone`` JSON, about 150 bytes) lets the API answer
410 ``archived`` for it, naming the record, instead of 404: ``archived`` gives this module's ``Archived`` error,
which the gateway maps to that answer.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import redis.asyncio as aioredis

from services.history import record as records
from services.history.verify import verify_record
from services.store import keys
from services.store.codec import encoder
from services.store.events import RedisEventStore
from services.projector.service import forget_read_models

ARCHIVED = keys.ARCHIVED  # hash in the event store: game id -> Tombstone JSON
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}


class Tombstone(msgspec.Struct, frozen=True):
    """What is left of an archived game in Redis."""

    archived_at: float
    record: str  # the record file's name
    events: int
    head: str  # the last event's hash: a record whose head differs is not this game's


_tombstone = msgspec.json.Decoder(Tombstone)


def parse_duration(text: str) -> float:
    """Seconds of '30d', '12h', '1d12h', '90m', '45s', '2w' (a bare number is seconds)."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhdw])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"a duration is like 30d, 12h, 1d12h, 90m or 45s, not {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


async def tombstone(events: aioredis.Redis, game_id: str) -> Tombstone | None:
    """The tombstone of an archived game (None: not archived)."""
    raw = await events.hget(ARCHIVED, game_id)
    return _tombstone.decode(raw) if raw is not None else None


class Archived(LookupError):
    """A game that was archived: what is asked of it is no longer served (the gateway answers 410 ``archived``)."""

    code = "archived"

    def __init__(self, game_id: str, found: Tombstone) -> None:
        super().__init__(f"game {game_id!r} ended and was archived to its record ({found.record}); "
                         "it is no longer served")
        self.game_id, self.tombstone = game_id, found
        self.message = str(self)


async def archived(events: aioredis.Redis, game_id: str) -> Archived | None:
    """The error for a game that is not found: ``Archived`` when it was archived (None when it was not)."""
    found = await tombstone(events, game_id)
    return Archived(game_id, found) if found is not None else None


@dataclass
class Report:
    archived: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # game id -> why it was left in place
    skipped: int = 0  # looked at, not finished or not old enough


async def archive(events: aioredis.Redis, views: aioredis.Redis, older_than_s: float, out: Path,
                  now: float | None = None, progress=None) -> Report:
    """Archives every finished game whose last event is older than ``older_than_s``; see the module's doc."""
    now = time.time() if now is None else now
    cutoff = now - older_than_s
    out.mkdir(parents=True, exist_ok=True)
    store = RedisEventStore(events)
    report = Report()
    try:
        # a game ends after it was created: only those created before the cutoff can qualify
        candidates = [g.decode() for p in keys.PARTITIONS
                      for g in await events.zrangebyscore(keys.games(p), "-inf", repr(cutoff))]
        for game_id in candidates:
            if progress is not None:
                progress()
            try:
                done = await _archive_one(events, views, store, game_id, cutoff, out, now)
            except (records.RecordError, ValueError, OSError) as exc:
                report.failed[game_id] = str(exc)
                continue
            if done:
                report.archived.append(game_id)
            else:
                report.skipped += 1
    finally:
        await store.aclose()
    return report


async def _archive_one(events: aioredis.Redis, views: aioredis.Redis, store: RedisEventStore, game_id: str,
                       cutoff: float, out: Path, now: float) -> bool:
    envelopes, commands = await store.read_with_commands(game_id)
    if not envelopes or envelopes[-1].recorded_at > cutoff \
            or envelopes[-1].type not in ("table.GameEnded", "table.GameCancelled"):
        return False
    seed = await events.get(keys.seed(game_id)) or b""
    record = records.make(game_id, envelopes, seed, archived_at=now, commands=commands)
    path = out / f"{game_id}.souk.json"
    data = records.encode(record)
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
    # what is on disk, read back, must hold and be this game's whole stream before anything is removed
    written = records.decode(path.read_bytes())
    problems = records.verify(written)
    if not problems and written.commands:  # a game played before Souk kept commands has none to re-run
        problems = list(verify_record(written).problems)
    if problems:
        raise records.RecordError(f"{path} does not verify: {problems[0]}")
    if list(written.events) != envelopes or await store.version(game_id) != len(envelopes):
        raise records.RecordError(f"{path} does not hold the game stream as it is")
    stone = Tombstone(now, path.name, len(envelopes), envelopes[-1].hash)
    game = record.header.game
    # its refusals' entries in the refusals index (members '{game}\n{command key}'), from its outcomes' keys
    refused = [f"{game_id}\n{k.decode()}" for k in await events.hkeys(keys.outcomes(game_id))]
    # The tombstone first (a global key), then the game's keys in one transaction (all in its partition's slot): a
    # stop between the two leaves a game both kept and tombstoned, archived again by the next run.
    await events.hset(ARCHIVED, game_id, encoder.encode(stone))
    partition = keys.partition(game_id)
    pipe = events.pipeline(transaction=True)
    pipe.delete(*keys.game_keys(game_id))
    for start in range(0, len(refused), 1000):
        pipe.zrem(keys.refusals(partition), *refused[start:start + 1000])
    pipe.zrem(keys.games(partition), game_id)
    pipe.zrem(keys.game_deadlines(game_id), game_id)  # a finished game left it with its last append: in case it did not
    await pipe.execute()
    await forget_read_models(views, game_id, game)
    return True
