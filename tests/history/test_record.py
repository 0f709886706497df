"""A finished game's record: made from the store, verified by anyone, and every edit of it caught."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from contracts.table import SeatJoined
from services.history import record as records
from services.store.codec import stored_envelopes
from services.store import keys
from services.store.events import RedisEventStore

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parents[1] / "services" / "fixtures" / "events_2026-11-23"


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
    # its chance: the seats gave entropy, the mix checks (records.check_fair_chance), and the game is fair
    joined = [e for e in records.decode_stream(list(record.events)) if isinstance(e, SeatJoined)]
    assert len(joined) == 2 and all(len(e.entropy) == 64 for e in joined)
    assert records.check_fair_chance(records.decode_stream(list(record.events)), record.seed) == []
    assert record.header.unfair is False
    assert record.header.status == "over" and record.header.events == len(record.events) > 100
    assert record.header.head == (await events.get(keys.head(finished[0]))).decode()
    assert record.commands is None  # the accepted commands' bodies: issue #10
    again = records.decode(records.encode(record))
    assert again == record and records.verify(again) == []


def _entropy(document):
    joined = next(e for e in document["events"] if e["type"] == "table.SeatJoined")
    joined["payload"]["entropy"] = "ab" * 32


def _die(document):
    rolled = next(e for e in document["events"] if e["type"] == "yspahan.DiceRolled")
    rolled["payload"]["white"][0] = rolled["payload"]["white"][0] % 6 + 1


def _secret(document):
    drawn = next(e for e in document["events"] if e.get("commitment") and e["type"] == "yspahan.DeckShuffled")
    drawn["payload"]["order"] = list(reversed(drawn["payload"]["order"]))


@pytest.mark.parametrize(("change", "found"), [
    (_die, "hash"),
    (_secret, "commitment"),
    (_entropy, "chance"),
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


def test_the_record_of_a_game_stored_before_fair_chance_verifies_and_shows_its_chosen_seed_as_unfair():
    fixture = json.loads((FIXTURES / "yspahan_stream.json").read_text())  # created with seed_chosen: true
    envelopes = stored_envelopes(fixture["game_id"], [(i.encode(), bytes.fromhex(r)) for i, r in fixture["entries"]])
    record = records.make(fixture["game_id"], envelopes, bytes.fromhex(fixture["seed"]))
    assert record.header.unfair is True and records.verify(record) == []
    assert json.loads(records.encode(record))["header"]["unfair"] is True
