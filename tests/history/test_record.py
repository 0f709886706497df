"""A finished game's record: made from the store, verified by anyone, and every edit of it caught."""

from __future__ import annotations

import json

import msgspec
import pytest

from services.history import record as records
from services.store import keys
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio


async def record_of(events, game_id: str) -> records.Record:
    store = RedisEventStore(events)
    try:
        return records.make(game_id, await store.read(game_id), await events.get(keys.seed(game_id)))
    finally:
        await store.aclose()


def edited(record: records.Record, change) -> records.Record:
    """The record with its JSON edited by ``change`` (a function of the decoded document)."""
    document = json.loads(records.encode(record))
    change(document)
    return records.decode(json.dumps(document).encode())


async def test_a_finished_games_record_holds_its_header_events_and_seed_and_verifies(stores, finished):
    events, _ = stores
    record = await record_of(events, finished[0])
    assert records.verify(record) == []
    assert record.header.status == "over" and record.header.events == len(record.events) > 100
    assert record.header.head == (await events.get(keys.head(finished[0]))).decode()
    assert record.commands is None  # the accepted commands' bodies: issue #10
    again = records.decode(records.encode(record))
    assert again == record and records.verify(again) == []


def _die(document):
    rolled = next(e for e in document["events"] if e["type"] == "yspahan.DiceRolled")
    rolled["payload"]["white"][0] = rolled["payload"]["white"][0] % 6 + 1


def _secret(document):
    drawn = next(e for e in document["events"] if e.get("commitment") and e["type"] == "yspahan.DeckShuffled")
    drawn["payload"]["order"] = list(reversed(drawn["payload"]["order"]))


@pytest.mark.parametrize(("change", "found"), [
    (_die, "hash"),
    (_secret, "commitment"),
    (lambda d: d["events"].pop(len(d["events"]) // 2), "prev_hash"),
    (lambda d: d.update(seed="ab" * 32), "seed"),
    (lambda d: d["header"].update(result={**d["header"]["result"], "winners": [9]}), "result"),
    (lambda d: d["header"].update(events=d["header"]["events"] + 1), "header"),
])
async def test_a_record_edited_anywhere_does_not_verify(stores, finished, change, found):
    record = await record_of(stores[0], finished[0])
    problems = records.verify(edited(record, change))
    assert any(found in p for p in problems), problems


def test_what_is_not_a_record_is_refused_in_one_line():
    with pytest.raises(records.RecordError, match="not a Souk record"):
        records.decode(b'{"format": "something else"}')
    with pytest.raises(records.RecordError, match="not a Souk record"):
        records.decode(msgspec.json.encode({"format": "souk.record", "version": 99, "header": None}))


async def test_a_game_still_in_play_has_no_record(stores, finished):
    events, _ = stores
    store = RedisEventStore(events)
    envelopes = (await store.read(finished[0]))[:-1]
    await store.aclose()
    with pytest.raises(records.RecordError, match="not finished"):
        records.make(finished[0], envelopes, b"")
