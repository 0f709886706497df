"""What a chaos run checks once the load has stopped, from the stores themselves and the driver's ledger.

- **lost**: a command (a create, a join) answered ``accepted`` (201) that is not in its game's stream.
- **duplicated**: a command id whose events appear more than once in its game's stream, or an event that
  appears more than once in ``souk:events``.
- **conflicting**: a command id that got two different answers, an answer that differs from the outcome the
  event store recorded for it, or a command answered ``refused`` whose events are in the stream.
- **unanswered**: a command id sent and never answered after its last resend.
- **unknown**: events of a command nobody sent.
- **contiguity**: each game's stream holds entries ``1-0, 2-0, ...`` with the same ``seq``.
- **chain**: ``services.history.audit.verify_audit`` over the stored events with the seed of ``souk:seed:{id}``, and
  ``verify_history`` over the spectator's history as the gateway serves it; a finished game's ``/audit`` too.
- **re-decision**: every game decided again from scratch, command by command, from the bodies the driver sent,
  the tokens it holds and the seed: ``domain.table.decide`` must give the stored payloads byte for byte.
- **read models**: every game's views, history, seat tokens, position and lobby entry equal what
  ``Projector.rebuild`` writes into an empty read store of its own.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from contracts.envelope import CommandEnvelope, EventEnvelope
from contracts.readmodels import HistoryRecord
from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from services.store import keys
from services.history.audit import verify_audit, verify_history
from services.store.codec import (command_decoder, encoder, event_decoder, event_envelope_decoder, origins,
                                  stored_envelopes, table_event_decoder, tag_of)
from services.engine.service import accepted_reply
from services.projector.history import history_records, read_history
from services.projector.service import Projector
from services.embedded.redis import RedisServer
from services.reliability.driver import Ledger, token_hash
from services.reliability.http import Client, Response, TransportError
from services.store import clients
from services.store.events import RedisEventStore

EXAMPLES = 10  # examples kept per kind of problem
history_decoder = msgspec.json.Decoder(HistoryRecord)


@dataclass
class Problems:
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, kind: str, detail: str, n: int = 1) -> None:
        self.counts[kind] += n
        if len(self.examples[kind]) < EXAMPLES:
            self.examples[kind].append(detail[:400])


@dataclass
class Group:
    """The events one command appended (consecutive in its stream)."""

    command_id: str
    envelopes: list[EventEnvelope]

    @property
    def first(self) -> EventEnvelope:
        return self.envelopes[0]


def groups_of(envelopes: list[EventEnvelope]) -> list[Group]:
    """The stream cut into its commands' appends: consecutive events of one command id, recorded at the same
    instant (the engine stamps one append's events alike: a command appended twice in a row makes two groups)."""
    out: list[Group] = []
    for env in envelopes:
        if out and out[-1].command_id == env.command_id and out[-1].first.recorded_at == env.recorded_at:
            out[-1].envelopes.append(env)
        else:
            out.append(Group(env.command_id, [env]))
    return out


async def wait_projected(events: aioredis.Redis, views: aioredis.Redis, timeout: float) -> list[str]:
    """Until the read store holds every game at its stream's length (and is marked initialised); returns the
    games still behind when ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    behind: list[str] = []
    while True:
        ids = [g.decode() for p in keys.PARTITIONS for g in await events.zrange(keys.games(p), 0, -1)]
        pipe = events.pipeline(transaction=False)
        for g in ids:
            pipe.xlen(keys.game_stream(g))
        lengths = await pipe.execute()
        pipe = views.pipeline(transaction=False)  # one GET each: the games' positions are in P slots
        for g in ids:
            pipe.get(keys.position(g))
        positions = await pipe.execute()
        behind = [g for g, n, p in zip(ids, lengths, positions) if int(p or 0) != n]
        if not behind and await views.exists(keys.READ_STORE_MARK):
            return []
        if time.monotonic() > deadline:
            return behind or ["(read store not marked initialised)"]
        await asyncio.sleep(0.25)


async def check(events_url: str, views_url: str, gateway: Client, ledger: Ledger,
                scratch_dir: Path) -> dict[str, Any]:
    problems = Problems()
    figures: dict[str, Any] = {}
    events = clients.async_client(events_url)
    views = clients.async_client(views_url)
    try:
        started = time.monotonic()
        behind = await wait_projected(events, views, 60.0)
        for g in behind:
            problems.add("projection_behind", g)
        figures["projection_settle_s"] = round(time.monotonic() - started, 2)

        game_ids = sorted({g.decode() for p in keys.PARTITIONS for g in await events.zrange(keys.games(p), 0, -1)}
                          | {k.decode().rsplit(":", 1)[1] for p in keys.PARTITIONS
                             async for k in events.scan_iter(match=keys.game_streams(p), count=1000)})
        streams: dict[str, list[EventEnvelope]] = {}
        for game_id in game_ids:
            streams[game_id] = await _stream(events, game_id, problems)
        figures["games_in_store"] = len(game_ids)
        figures["events_in_store"] = sum(len(s) for s in streams.values())

        _match_ledger(ledger, streams, problems, figures)
        await _recorded_outcomes(events, ledger, streams, problems)
        await _compare_with_rebuild(events, views, game_ids, scratch_dir, problems)
        figures["read_models_compared"] = len(game_ids)
        for game_id, envelopes in streams.items():
            seed = await events.get(keys.seed(game_id)) or b""
            _chain(game_id, envelopes, seed, problems)
            _redecide(game_id, envelopes, seed, ledger, problems)
            await _history(events, views, game_id, envelopes, problems)
            await _audit(gateway, game_id, envelopes, seed, problems)
        await _events_stream(events, streams, problems)
        figures["games_finished_in_store"] = sum(
            1 for s in streams.values() if s and s[-1].type == "table.GameEnded")
    finally:
        await events.aclose()
        await views.aclose()
    figures["problems"] = dict(problems.counts)
    figures["problem_examples"] = {k: v for k, v in problems.examples.items() if v}
    return figures


async def _stream(events: aioredis.Redis, game_id: str, problems: Problems) -> list[EventEnvelope]:
    """The game's stream, checked for contiguity: entry ids 1-0, 2-0, ... and the same seq in each envelope."""
    out: list[EventEnvelope] = []
    entries = await events.xrange(keys.game_stream(game_id))
    decoded = stored_envelopes(game_id, [(entry_id, fields[b"e"]) for entry_id, fields in entries])
    for i, ((entry_id, _), env) in enumerate(zip(entries, decoded), start=1):
        if entry_id.decode() != f"{i}-0" or env.seq != i or env.game_id != game_id:
            problems.add("not_contiguous", f"{game_id}: entry {i} has id {entry_id.decode()}, seq {env.seq}")
        out.append(env)
    return out


@dataclass
class Placed:
    """Where each command of the ledger is in the stores: the stream groups found for each command id."""

    groups: dict[tuple[str, str], list[Group]] = field(default_factory=lambda: defaultdict(list))


def _match_ledger(ledger: Ledger, streams: dict[str, list[EventEnvelope]], problems: Problems,
                  figures: dict[str, Any]) -> Placed:
    placed = Placed()
    for game_id, envelopes in streams.items():
        for group in groups_of(envelopes):
            placed.groups[(game_id, group.command_id)].append(group)
    for (game_id, command_id), found in placed.groups.items():
        if len(found) > 1:
            problems.add("duplicated", f"{game_id}: command {command_id} appended {len(found)} times "
                                       f"(seq {[g.first.seq for g in found]})", len(found) - 1)

    accepted = refused = unanswered = 0
    codes: Counter = Counter()
    for (game_id, seat, command_id), sent in ledger.commands.items():
        found = placed.groups.get((game_id, command_id), [])
        distinct = {a for a in sent.answers}
        if len(distinct) > 1:
            problems.add("conflicting", f"{game_id} seat {seat} {command_id}: answers {sorted(distinct)}")
        if not sent.answers:
            unanswered += 1
            problems.add("unanswered", f"{game_id} seat {seat} {command_id} ({sent.requests} requests)")
            continue
        status, body = sent.outcome
        answer = json.loads(body)
        if status == 200:
            accepted += 1
            if not found:
                problems.add("lost", f"{game_id} seat {seat} {command_id}: accepted at version "
                                     f"{answer.get('version')}, not in the stream")
                continue
            group = found[0]
            if group.first.seat != seat:
                problems.add("wrong_seat", f"{game_id} {command_id}: sent for seat {seat}, "
                                           f"stored for {group.first.seat}")
            if group.envelopes[-1].seq != answer["version"] or len(group.envelopes) != answer["events"]:
                problems.add("wrong_answer", f"{game_id} {command_id}: answered version {answer['version']} "
                                             f"with {answer['events']} events, stored at seq "
                                             f"{group.first.seq}..{group.envelopes[-1].seq}")
        else:
            refused += 1
            codes[answer.get("code", str(status))] += 1
            if found:
                problems.add("conflicting", f"{game_id} seat {seat} {command_id}: answered {status} "
                                            f"{answer.get('code')} but appended at seq {found[0].first.seq}")

    # Creates and joins: no id of the client's; found by their unique title and name.
    created = {}
    for game_id, envelopes in streams.items():
        if envelopes and envelopes[0].type == "table.GameCreated":
            created[table_event_decoder.decode(envelopes[0].payload).title] = game_id
    creates_applied_unanswered = 0
    for title, try_ in ledger.creates.items():
        if try_.game_id is not None:
            if created.get(title) != try_.game_id:
                problems.add("lost", f"create {title!r}: answered 201 with game {try_.game_id}, not in the store")
        elif title in created:
            creates_applied_unanswered += 1
    joined: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for game_id, envelopes in streams.items():
        for env in envelopes:
            if env.type == "table.SeatJoined":
                event = table_event_decoder.decode(env.payload)
                joined[(game_id, event.name)].append((event.seat, event.token_hash))
    joins_applied_unanswered = 0
    for (game_id, name), try_ in ledger.joins.items():
        found_joins = joined.get((game_id, name), [])
        if len(found_joins) > 1:
            problems.add("duplicated", f"join {name} of {game_id}: {len(found_joins)} seats", len(found_joins) - 1)
        if try_.token is not None:
            if found_joins != [(try_.seat, token_hash(try_.token))]:
                problems.add("lost", f"join {name} of {game_id}: answered 201 for seat {try_.seat}, "
                                     f"stored {found_joins}")
        elif found_joins:
            joins_applied_unanswered += 1

    figures.update(
        commands_sent=len(ledger.commands), accepted=accepted, refused=refused, refused_codes=dict(codes),
        unanswered=unanswered, creates_tried=len(ledger.creates),
        creates_applied_unanswered=creates_applied_unanswered, joins_tried=len(ledger.joins),
        joins_applied_unanswered=joins_applied_unanswered)
    return placed


async def _recorded_outcomes(events: aioredis.Redis, ledger: Ledger, streams: dict[str, list[EventEnvelope]],
                             problems: Problems) -> None:
    """Each answer is the outcome the event store recorded under the command's key (a finished game's accepted
    command: the reply its events give, as the engine answers it again: ``accepted_reply``)."""
    answered = [(k, s) for k, s in ledger.commands.items() if s.answers]
    for start in range(0, len(answered), 500):
        chunk = answered[start:start + 500]
        pipe = events.pipeline(transaction=False)
        for (game_id, seat, command_id), _ in chunk:
            pipe.hget(keys.outcomes(game_id), f"{seat}:{command_id}")
        for ((game_id, seat, command_id), sent), recorded in zip(chunk, await pipe.execute()):
            if recorded is None:
                command = CommandEnvelope(command_id, game_id, msgspec.Raw(b"0"), seat=seat)
                first = accepted_reply(streams.get(game_id, []), command)
                recorded = encoder.encode(first) if first is not None else None
            if recorded is None:
                problems.add("outcome_not_recorded", f"{game_id} seat {seat} {command_id}")
                continue
            record = json.loads(recorded)
            status, body = sent.outcome
            answer = json.loads(body)
            if status == 200:
                same = record == answer
            else:
                same = record["status"] == "rejected" and (
                    (record["code"], record["message"]) == (answer.get("code"), answer.get("message")))
            if not same:
                problems.add("conflicting", f"{game_id} seat {seat} {command_id}: answered {status} {body}, "
                                            f"recorded {recorded.decode()}")


def _chain(game_id: str, envelopes: list[EventEnvelope], seed: bytes, problems: Problems) -> None:
    if not envelopes:
        return
    if not seed:
        problems.add("chain", f"{game_id}: no seed under {keys.seed(game_id)}")
        return
    created = table_event_decoder.decode(envelopes[0].payload)
    for problem in verify_audit({"seed": seed.hex(), "seed_hash": created.seed_hash, "events": envelopes}):
        problems.add("chain", f"{game_id}: {problem}")


def _redecide(game_id: str, envelopes: list[EventEnvelope], seed: bytes, ledger: Ledger, problems: Problems) -> None:
    """Decides the game again from scratch with what the driver sent: every group must come out byte for byte."""
    table = tbl.EMPTY
    for group in groups_of(envelopes):
        first = group.first
        try:
            seat, token, body = _command_of(game_id, group, table, ledger)
        except LookupError as exc:
            problems.add("unknown", f"{game_id} seq {first.seq}: {exc}")
            body = None
        produced: list[Any] | None = None
        if body is not None:
            try:
                produced = tbl.decide(table, seat, token, body, Chance(seed, table.version))
            except RuleViolation as exc:
                problems.add("redecision", f"{game_id} seq {first.seq} {first.command_id}: refused now ({exc.code})")
            except Exception as exc:  # noqa: BLE001 - a record the rules cannot follow is a finding, not a crash
                problems.add("redecision", f"{game_id} seq {first.seq} {first.command_id}: deciding it again raised "
                                           f"{type(exc).__name__}: {exc}")
        stored = [bytes(e.payload) for e in group.envelopes]
        if produced is not None:
            again = [encoder.encode(e) for e in produced]
            types = [tag_of(e) for e in produced]
            if again != stored or types != [e.type for e in group.envelopes]:
                problems.add("redecision", f"{game_id} seq {first.seq} {first.command_id}: decided again as "
                                           f"{types}, stored {[e.type for e in group.envelopes]}")
                produced = None
        try:
            if produced is None:  # go on from what is stored
                decode = event_decoder(table.game or "").decode if table.exists else table_event_decoder.decode
                produced = [decode(e.payload) for e in group.envelopes]
            table = tbl.fold(produced, table, origins(group.envelopes))
        except Exception as exc:  # noqa: BLE001 - the stored events cannot be folded: nothing after can be decided
            problems.add("redecision", f"{game_id} seq {first.seq}: the stored events cannot be folded "
                                       f"({type(exc).__name__}: {exc}); the rest of the game is not decided again")
            return


def _command_of(game_id: str, group: Group, table: tbl.Table, ledger: Ledger) -> tuple[int | None, str | None, Any]:
    """The command behind a group, as the gateway built its envelope: (seat, token hash, body)."""
    first = group.first
    if first.type == "table.GameCreated":
        title = table_event_decoder.decode(first.payload).title
        try_ = ledger.creates.get(title)
        if try_ is None:
            raise LookupError(f"a game created under a title nobody sent: {title!r}")
        # A create whose answer was lost: its creator token was never seen; its hash is taken from the store.
        event = table_event_decoder.decode(first.payload)
        creator = token_hash(try_.creator_token) if try_.creator_token else getattr(event, "creator_hash", "")
        extra = {"creator_hash": creator} if creator else {}
        # as the engine decides it: a new game plays its title's newest rules (``tbl.newest_rules``)
        return None, None, tbl.newest_rules(CreateGame(try_.game, try_.title, try_.seats, {}, try_.seed,
                                                       try_.seed is not None, **extra))
    if first.type == "table.SeatJoined":
        event = table_event_decoder.decode(first.payload)
        try_ = ledger.joins.get((game_id, event.name))
        if try_ is None:
            raise LookupError(f"a join under a name nobody sent: {event.name!r}")
        # A join whose answer was lost: its token was never seen; its hash is taken from the store.
        hashed = token_hash(try_.token) if try_.token is not None else event.token_hash
        return try_.seat, None, JoinSeat(try_.name, hashed, try_.seat)
    sent = ledger.commands.get((game_id, first.seat, first.command_id))
    if sent is None:
        raise LookupError(f"command {first.command_id} of seat {first.seat}: nobody sent it")
    token = ledger.tokens.get((game_id, first.seat))
    body = command_decoder(table.game or None).decode(json.dumps(sent.body).encode())
    return first.seat, token_hash(token) if token else None, body


async def _history(events: aioredis.Redis, views: aioredis.Redis, game_id: str, envelopes: list[EventEnvelope],
                   problems: Problems) -> None:
    """The spectator's history as the gateway serves it (``read_history``), whole: its chain."""
    records = (await read_history(events, views, game_id, None, 0, max(1, len(envelopes)))).entries
    if len(records) != len(envelopes):
        problems.add("history_length", f"{game_id}: {len(records)} history entries, {len(envelopes)} events")
    # as a client reads them: the JSON the gateway sends (a derived entry carries its event as raw JSON)
    for problem in verify_history(game_id, [msgspec.json.decode(msgspec.json.encode(r)) for r in records]):
        problems.add("chain", f"{game_id} history: {problem}")


async def _audit(gateway: Client, game_id: str, envelopes: list[EventEnvelope], seed: bytes,
                 problems: Problems) -> None:
    """A finished game's ``GET /games/{id}/audit``: its seed is the stored one, and it verifies."""
    if not envelopes or envelopes[-1].type != "table.GameEnded":
        return
    r = await _get(gateway, f"/games/{game_id}/audit")
    if r is None:
        problems.add("audit_unavailable", game_id)
        return
    audit = r.json()
    if audit["seed"] != seed.hex():
        problems.add("chain", f"{game_id}: the audit's seed is not {keys.seed(game_id)}")
    for problem in verify_audit(audit):
        problems.add("chain", f"{game_id} audit: {problem}")


async def _get(client: Client, path: str, **kw: Any) -> Response | None:
    for attempt in range(20):
        try:
            r = await client.get(path, **kw)
            if r.status_code == 200:
                return r
        except TransportError:
            pass
        await asyncio.sleep(min(1.0, 0.05 * 2 ** attempt))
    return None


async def _events_stream(events: aioredis.Redis, streams: dict[str, list[EventEnvelope]], problems: Problems) -> None:
    """The partitions' events streams (what projectors read) hold each stored event exactly once, as stored."""
    seen: Counter = Counter()
    trims = [await _partition_events(events, keys.events(p), streams, problems, seen) for p in keys.PARTITIONS]
    trimmed = -1 if min(trims) < 0 else sum(trims)
    for key, n in seen.items():
        if n > 1:
            problems.add("duplicated", f"the events streams hold {key[0]} seq {key[1]} {n} times", n - 1)
    total = sum(len(s) for s in streams.values())
    if trimmed < 0:  # Redis < 7 does not count what was added
        trimmed = total - len(seen) if len(seen) <= total else 0
    if len(seen) + trimmed != total:
        problems.add("events_stream", f"the events streams hold {len(seen)} distinct events, the game streams {total}")


async def _partition_events(events: aioredis.Redis, stream: str, streams: dict[str, list[EventEnvelope]],
                            problems: Problems, seen: Counter) -> int:
    """One partition's events stream into ``seen``; returns how many entries were trimmed from it (-1: Redis
    cannot tell)."""
    after = "-"
    for _ in range(100_000):
        batch = await events.xrange(stream, min=after, count=5000)
        for entry_id, fields in batch:
            env = event_envelope_decoder.decode(fields[b"e"])
            seen[(env.game_id, env.seq)] += 1
            stored = streams.get(env.game_id, [])
            if not 0 < env.seq <= len(stored) or stored[env.seq - 1].hash != env.hash:
                problems.add("events_stream", f"{env.game_id} seq {env.seq}: not as in its game's stream")
        if len(batch) < 5000:
            break
        after = "(" + batch[-1][0].decode()
    try:  # trimmed behind every projector group (streams.trim_read): what it lacks must be what went
        info = await events.xinfo_stream(stream)
        return int(info["entries-added"]) - int(info["length"])
    except ResponseError:  # no such stream: nothing was added to it
        return 0
    except KeyError:
        return -1


async def _compare_with_rebuild(events: aioredis.Redis, views: aioredis.Redis, game_ids: list[str],
                                scratch_dir: Path, problems: Problems) -> None:
    """Rebuilds every read model into an empty Redis of its own and compares, game by game."""
    server = RedisServer(scratch_dir, appendonly=False).start()
    scratch = aioredis.Redis.from_url(server.url)
    store = RedisEventStore(events)
    projector = Projector(scratch, store)
    try:
        await projector.rebuild()
        for game_id in game_ids:
            live, rebuilt = await _read_models(views, game_id), await _read_models(scratch, game_id)
            if not rebuilt["history"] and live["history"]:  # a finished game's: only a cache, derived on read
                rebuilt["history"] = await history_records(store, game_id)
            for part in live:
                if live[part] != rebuilt[part]:
                    problems.add("read_models", f"{game_id}: {part} differs from a rebuild: live "
                                                f"{_short(live[part])}, rebuilt {_short(rebuilt[part])}")
    finally:
        await projector.aclose()
        await store.aclose()
        await scratch.aclose()
        server.stop()


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:120]}... ({len(text)} chars)"


async def _read_models(redis: aioredis.Redis, game_id: str) -> dict[str, Any]:
    pipe = redis.pipeline(transaction=True)
    pipe.hgetall(keys.views(game_id))
    pipe.lrange(keys.history(game_id), 0, -1)
    pipe.hgetall(keys.seat_tokens(game_id))
    pipe.get(keys.position(game_id))
    pipe.hget(keys.game_lobby(game_id), game_id)
    pipe.zscore(keys.lobby_index(keys.partition(game_id)), game_id)
    views, history, seats, position, lobby, order = await pipe.execute()
    return {"views": views, "history": history, "seat tokens": seats, "position": position, "lobby": lobby,
            "lobby order": order}

