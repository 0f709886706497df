"""The leak scan: what each audience receives from a real `souk serve` is exactly what the rules let it see.

Random games of every title (at both ends of its seat counts, and Samarkand's ``hidden_goods`` variant) are played to the end over HTTP, with
every seat and a spectator following their WebSocket. Everything an audience receives is recorded: its views
(``GET …/view`` at many versions), its history pages (as each seat and as the spectator, at several points of
the game and at the end, with random ``after`` and ``limit``) and every WebSocket frame. After the end, the
audit (every event unredacted, and the seed) is folded with ``domain.table`` and, for each thing received, the
domain's own answer for that audience at that version is rebuilt: ``tbl.views(table_at_v, game_id)[audience]``
for a view or a frame, ``tbl.redact(table, event, audience)`` for a history entry. Any difference is a leak (or
a lie): the serving layer must never show more than the rules' redaction, nor anything else.

And the digests: every history entry's ``hash`` is the chain-2 hash of what the spectator sees of the event and
of its salted commitment (``contracts.envelope.ChainLink``), never a digest over a hidden payload; the
spectator's history verifies (``services.history.audit.verify_history``), the audit too (``verify_audit``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import time
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from httpx_ws import aconnect_ws

from contracts.envelope import ChainLink, EventEnvelope, link_hash
from domain import table as tbl
from domain.kernel import bot_command, games
from services.history.audit import verify_audit, verify_history
from services.store.codec import encoder, event_decoder, fold_stream, game_name, origins
from services.store.events import RedisEventStore
from tests.e2e.support import bearer, started_game
from tests.fuzz import budget

pytestmark = pytest.mark.anyio

# (game, seats, options): every title, both ends of its seat counts, and Samarkand's hidden-goods variant.
GAMES = [("samarkand", 3, {}), ("samarkand", 5, {"hidden_goods": True}), ("yspahan", 2, {}), ("yspahan", 4, {}),
         ("istanbul", 1, {}), ("istanbul", 5, {}), ("karawane", 2, {}), ("karawane", 5, {})]
_envelope = msgspec.json.Decoder(EventEnvelope)


def audience_name(seat: int | None) -> str:
    return "spectator" if seat is None else f"seat {seat}"


class Received:
    """Everything one game's audiences received: (audience, what, version or seq, JSON)."""

    def __init__(self) -> None:
        self.views: list[tuple[int | None, str, dict]] = []  # (audience, "view" or "frame", TableView JSON)
        self.entries: list[tuple[int | None, dict]] = []  # (audience, HistoryEntry JSON)
        self.pages = 0
        self.frames = 0


async def follow(url: str, client: httpx.AsyncClient, seat: int | None, received: Received) -> None:
    """A WebSocket following the game until it is over (every frame recorded)."""
    async with aconnect_ws(url, client) as ws:
        for _ in range(100_000):
            view = json.loads(await asyncio.wait_for(ws.receive_text(), 30))
            received.views.append((seat, "frame", view))
            received.frames += 1
            if view["status"] == "over":
                return


async def read_history(client: httpx.AsyncClient, game_id: str, seat: int | None, headers: dict, rng: random.Random,
                       received: Received, start: int = 0) -> list[dict]:
    """The audience's whole history from ``start``, in pages of random sizes."""
    path = f"/games/{game_id}/history" if seat is None else f"/games/{game_id}/seats/{seat}/history"
    entries: list[dict] = []
    after = start
    for _ in range(10_000):
        r = await client.get(path, params={"after": after, "limit": rng.choice([1, 7, 50, 200, 1000])},
                             headers=headers)
        assert r.status_code == 200, r.text
        page = r.json()
        received.pages += 1
        if not page["entries"]:
            return entries
        entries += page["entries"]
        received.entries += [(seat, e) for e in page["entries"]]
        after = page["next_after"]
    raise AssertionError("the history never ended")


async def play(client: httpx.AsyncClient, souk_url: str, game: str, seats: int, options: dict,
               rng: random.Random, store: RedisEventStore) -> tuple[str, Received, dict]:
    seed = bytes(rng.getrandbits(8) for _ in range(32)).hex()
    game_id, tokens = await started_game(client, game, seats, f"leak scan {game}", options=options, seed=seed,
                                           unfair=True)
    auth: dict[int | None, dict] = {s: bearer(t) for s, t in enumerate(tokens)}
    auth[None] = {}
    received = Received()
    sockets = [asyncio.create_task(follow(f"{souk_url}/games/{game_id}/seats/{s}/ws?token={tokens[s]}", client, s,
                                          received)) for s in range(seats)]
    sockets.append(asyncio.create_task(follow(f"{souk_url}/games/{game_id}/ws", client, None, received)))

    async def views_now() -> None:
        for seat, headers in auth.items():
            path = f"/games/{game_id}/view" if seat is None else f"/games/{game_id}/seats/{seat}/view"
            r = await client.get(path, headers=headers)
            assert r.status_code == 200, r.text
            received.views.append((seat, "view", r.json()))

    commands = 0
    for commands in range(20_000):
        spectator = (await client.get(f"/games/{game_id}/view")).json()
        received.views.append((None, "view", spectator))
        if spectator["status"] == "over":
            break
        if rng.random() < 0.25:  # every audience's view at a quarter of the versions
            await views_now()
        if rng.random() < 0.01:  # history pages in the middle of the game, each audience from a random point
            for seat, headers in auth.items():
                await read_history(client, game_id, seat, headers, rng, received,
                                   start=rng.randrange(spectator["version"] + 1))
        seat = rng.choice(spectator["flow"]["awaiting"])
        legal = (await client.get(f"/games/{game_id}/seats/{seat}/legal", headers=auth[seat])).json()["legal"]
        command = rng.choice(legal)
        if getattr(games()[game], "bot", None) is not None:  # random play rarely ends it: its bot, on the game
            table = fold_stream(await store.read(game_id))     # folded from the event store, one of ``legal``
            command = json.loads(encoder.encode(bot_command(tbl.game_of(table), table.state, seat, rng)))
            assert command in legal, command
        r = await client.post(f"/games/{game_id}/seats/{seat}/commands", headers=auth[seat],
                              json={"command_id": f"c{commands}", "command": command})
        assert r.status_code == 200, r.text
    else:
        raise AssertionError("the game did not end")
    await views_now()
    await asyncio.wait_for(asyncio.gather(*sockets), 60)
    histories = {seat: await read_history(client, game_id, seat, auth[seat], rng, received) for seat in auth}
    r = await client.get(f"/games/{game_id}/audit")
    assert r.status_code == 200, r.text
    audit = r.json()
    assert verify_audit(audit) == []
    assert verify_history(game_id, histories[None]) == []
    assert [e["seq"] for e in histories[None]] == list(range(1, len(audit["events"]) + 1))
    return game_id, received, audit


def as_json(value: Any) -> Any:
    return json.loads(encoder.encode(value))


def scan(game_id: str, received: Received, audit: dict) -> tuple[list[str], int]:
    """Compares everything received with what the domain gives each audience; returns the leaks and the number
    of digests checked."""
    envelopes = [_envelope.decode(encoder.encode(raw)) for raw in audit["events"]]  # the JSON the chain hashed
    decode = event_decoder(game_name(envelopes[0])).decode
    tables: list[tbl.Table] = [tbl.EMPTY]  # tables[v]: the game at version v
    events: list[Any] = [None]
    for env, origin in zip(envelopes, origins(envelopes)):  # with who made each event, as the services fold
        event = decode(env.payload)
        events.append(event)
        tables.append(tbl.evolve(tables[-1], event, origin))
    leaks: list[str] = []
    views_at: dict[int, dict] = {}
    for seat, what, got in received.views:
        version = got["version"]
        if version not in views_at:
            views_at[version] = {s: as_json(v) for s, v in tbl.views(tables[version], game_id).items()}
        want = views_at[version][seat]
        # Presence is the gateway's at the time it serves (issue #19), not the rules': which seats are connected
        # and since when, nothing else, and the same for every audience.
        got = dict(got)
        presence = got.pop("presence", [])
        if [sorted(p) for p in presence] != [["connected", "seat", "since"]] * len(presence) or \
                [p["seat"] for p in presence] not in ([], list(range(len(got["seats"])))):
            leaks.append(f"{what} of {audience_name(seat)} at version {version}: presence {presence!r}")
        want = {k: v for k, v in want.items() if k != "presence"}
        if got != want:
            leaks.append(f"{what} of {audience_name(seat)} at version {version}: {_diff(got, want)}")
    digests = 0
    for seat, entry in received.entries:
        seq = entry["seq"]
        env, table = envelopes[seq - 1], tables[seq]
        want_event = as_json(tbl.redact(table, events[seq], seat))
        if entry["event"] != want_event:
            leaks.append(f"history entry {seq} ({entry['type']}) of {audience_name(seat)}: "
                         f"{_diff(entry['event'], want_event)}")
        header = (entry["type"], entry["seat"], entry["command_id"], entry["recorded_at"], entry["prev_hash"],
                  entry["hash"], entry.get("commitment", ""), entry.get("chain", 1))
        if header != (env.type, env.seat, env.command_id, env.recorded_at, env.prev_hash, env.hash, env.commitment,
                      env.chain):
            leaks.append(f"history entry {seq} of {audience_name(seat)}: its header differs from the record")
        # The only digests a reader gets: the chain hash, over what a spectator sees and the salted commitment.
        spectator = encoder.encode(tbl.redact(table, events[seq], None))
        public = bytes(env.public) if env.public else bytes(env.payload)
        if json.loads(public) != json.loads(spectator):
            leaks.append(f"event {seq}: the chain's public part is not the spectator's redaction")
        link = ChainLink(game_id, seq, env.type, env.command_id, env.seat, env.recorded_at, env.prev_hash,
                         msgspec.Raw(public), env.commitment)
        if entry.get("chain", 1) < 2 or link_hash(link) != entry["hash"]:
            leaks.append(f"history entry {seq} of {audience_name(seat)}: its hash covers more than the public part")
        if env.commitment and public == bytes(env.payload):
            leaks.append(f"event {seq}: a commitment on an event that hides nothing")
        digests += 1
    return leaks, digests


def _diff(got: Any, want: Any, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if got.get(key, "<absent>") != want.get(key, "<absent>"):
                return _diff(got.get(key, "<absent>"), want.get(key, "<absent>"), f"{path}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                return _diff(g, w, f"{path}[{i}]")
    return f"{path or '.'}: received {json.dumps(got)[:200]}, the rules give {json.dumps(want)[:200]}"


def the_scan_sees_a_leak(game_id: str, received: Received, audit: dict) -> None:
    """The scan is not blind: a seat's frame shown to the spectator, a seat's secret in the spectator's history,
    and an entry whose hash covers the hidden payload are each reported."""
    frame = next(v for s, what, v in received.views if s == 0 and what == "frame" and v["view"] is not None)
    secret = next(e for s, e in received.entries if s is not None and e["commitment"])
    envelope = audit["events"][secret["seq"] - 1]
    leaky = Received()
    leaky.views = [(None, "frame", {**frame, "seat": None, "legal": []})]
    leaky.entries = [(None, secret), (None, {**secret, "event": secret["event"], "hash": _naive_hash(envelope)})]
    found, _ = scan(game_id, leaky, audit)
    assert len(found) == 3 and "frame of spectator" in found[0] and "history entry" in found[1], found
    assert "its hash covers more" in found[2], found


def _naive_hash(envelope: dict) -> str:
    """A chain hash over the whole event, hidden part included (what chain 1 did)."""
    import hashlib

    return hashlib.sha256(encoder.encode(envelope["payload"])).hexdigest()


def test_the_scan_plays_every_title_at_both_ends_of_its_seat_counts():
    scanned = {(game, seats) for game, seats, _ in GAMES}
    assert scanned >= {(name, seats) for name, g in games().items() for seats in (g.min_seats, g.max_seats)}


async def test_no_audience_receives_more_than_the_rules_redaction(souk_url, redis_url):
    rng = random.Random(20261123)
    started = time.monotonic()
    totals = collections.Counter()
    leaks: list[str] = []
    store = RedisEventStore(aioredis.Redis.from_url(redis_url))  # the event store the server writes (database 0)
    async with httpx.AsyncClient(base_url=souk_url, timeout=30) as client:
        for _ in range(budget.SCALE or 1):
            for game, seats, options in GAMES:
                game_id, received, audit = await play(client, souk_url, game, seats, options, rng, store)
                found, digests = scan(game_id, received, audit)
                if not totals["games"]:
                    the_scan_sees_a_leak(game_id, received, audit)
                leaks += [f"{game_id} ({game} {seats} {options}): {leak}" for leak in found]
                totals.update(games=1, events=len(audit["events"]), frames=received.frames, pages=received.pages,
                              views=sum(what == "view" for _, what, _ in received.views),
                              entries=len(received.entries), digests=digests,
                              secret_entries=sum(e["commitment"] != "" for s, e in received.entries if s is not None))
    await store.aclose()
    print(f"\nleak scan: {totals['games']} games ({totals['events']} events), {totals['views']} views, "
          f"{totals['frames']} WebSocket frames, {totals['pages']} history pages ({totals['entries']} entries, "
          f"{totals['digests']} digests checked; {totals['secret_entries']} seat entries of "
          f"events that hide something), {len(leaks)} leaks, {time.monotonic() - started:.1f} s")
    assert not leaks, "\n".join(leaks[:30])
