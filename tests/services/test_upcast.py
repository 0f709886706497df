"""Schema evolution (issue #10): stored events stay readable forever. Every event type of Yspahan, Samarkand and the
table, as the bytes commit d117cd1 stored (fixtures/events_2026-11-23, made by make_events_2026_11_23.py), decodes
with today's decoders, an older shape upcast to the current one (contracts.base.upcast)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from contracts.base import UPCASTS, Event, upcast, upcast_event
from contracts.envelope import GENESIS_HASH, chain_hash
from contracts.table import TABLE_EVENTS, GameCreated, GameStarted, SeatJoined
from domain import table as tbl
from domain.kernel import get_game
from services.store.codec import (EventDecoder, decode_stream, event_decoder, fold_stream, stored_envelopes,
                                  table_event_decoder, tag_of)

FIXTURES = Path(__file__).parent / "fixtures" / "events_2026-11-23"
RENAMED = {"table.GameCreated": {"seed_chosen": "unfair"}}  # schema 1 -> 2


def stored(name: str) -> list[bytes]:
    return (FIXTURES / f"{name}.jsonl").read_bytes().splitlines()


@pytest.mark.parametrize("name", ["table", "yspahan", "samarkand"])
def test_the_fixtures_hold_every_event_type_of_their_day_and_each_is_still_a_type_today(name):
    tags = {json.loads(p)["type"] for p in stored(name)}
    assert tags == set(json.loads((FIXTURES / "types.json").read_text())[name])  # every type d117cd1 had
    today = TABLE_EVENTS if name == "table" else get_game(name).event_types
    assert tags <= {tag_of(t) for t in today}  # an event type is never taken away: stored ones stay readable


@pytest.mark.parametrize("name", ["table", "yspahan", "samarkand"])
def test_every_stored_event_of_the_previous_shape_decodes_in_todays_with_its_values(name):
    decode = event_decoder("yspahan" if name == "table" else name).decode
    for payload in stored(name):
        old = json.loads(payload)
        event = decode(payload)
        assert tag_of(event) == old["type"]
        new = json.loads(msgspec.json.encode(event))
        renamed = RENAMED.get(old["type"], {})
        for key, value in old.items():  # every stored value is kept (under its new name, if renamed)
            assert new[renamed.get(key, key)] == value, (old["type"], key)


def test_a_game_created_before_unfair_reads_its_chosen_seed_as_unfair():
    created = [p for p in stored("table") if p.startswith(b'{"type":"table.GameCreated"')]
    assert {json.loads(p)["seed_chosen"] for p in created} == {True, False}
    for payload in created:
        for decode in (table_event_decoder.decode, event_decoder("samarkand").decode):
            event = decode(payload)
            assert isinstance(event, GameCreated) and event.schema == 2
            assert event.unfair is json.loads(payload)["seed_chosen"]
    # the plain typed decoder (no upcast) would lose it: what the upcast step is for
    chosen = next(p for p in created if json.loads(p)["seed_chosen"])
    assert msgspec.json.decode(chosen, type=GameCreated).unfair is False


def test_seats_and_starts_stored_before_fair_chance_read_with_no_entropy_and_no_commitment():
    joined = [table_event_decoder.decode(p) for p in stored("table") if b'"table.SeatJoined"' in p[:30]]
    assert joined and all(isinstance(e, SeatJoined) and e.entropy == "" for e in joined)
    started = [table_event_decoder.decode(p) for p in stored("table") if b'"table.GameStarted"' in p[:30]]
    assert started and all(isinstance(e, GameStarted) and e.chance_hash == "" for e in started)


def test_todays_events_are_not_upcast_again():
    event = GameCreated("samarkand", "t", 3, {}, "ab" * 32, unfair=True)
    payload = msgspec.json.encode(event)
    assert b'"schema":2' in payload and table_event_decoder.decode(payload) == event
    assert upcast_event(json.loads(payload)) == json.loads(payload)


@pytest.mark.parametrize("name", ["yspahan", "samarkand"])
def test_a_game_stream_stored_in_both_forms_reads_chains_and_folds(name):
    fixture = json.loads((FIXTURES / f"{name}_stream.json").read_text())
    entries = [(entry_id.encode(), bytes.fromhex(raw)) for entry_id, raw in fixture["entries"]]
    assert {raw[:1] == b"{" for _, raw in entries} == {True, False}  # the table's JSON and the game's compact form
    envelopes = stored_envelopes(fixture["game_id"], entries)
    prev = GENESIS_HASH
    for env in envelopes:
        assert env.prev_hash == prev and chain_hash(env) == env.hash
        prev = env.hash
    events = decode_stream(envelopes)
    table = fold_stream(envelopes)
    assert table.version == len(entries) and table.unfair is True  # created with seed_chosen
    assert tbl.fold(events).state == table.state
    if fixture["finished"]:
        seed = bytes.fromhex(fixture["seed"])
        assert table.status == tbl.OVER and events[-1].seed == fixture["seed"]
        assert tbl.check_chance(events, seed) == []  # no seat gave entropy: the chance was the server's seed


class Renamed(Event, tag="test.Renamed", frozen=True):
    amount: int  # schema 1 named it "gold" (and had it required)
    schema: int = 2


def test_an_upcast_step_reads_an_older_shape_the_current_type_would_refuse():
    @upcast("test.Renamed", 1)
    def _renamed_1(raw):
        raw["amount"] = raw.pop("gold")
        return raw

    try:
        decoder = EventDecoder((Renamed,))
        assert decoder.decode(b'{"type":"test.Renamed","gold":3}') == Renamed(3)
        assert decoder.decode(b'{"type":"test.Renamed","amount":4,"schema":2}') == Renamed(4)
        with pytest.raises(ValueError):
            upcast("test.Renamed", 1)(_renamed_1)  # one step per type and version
        with pytest.raises(msgspec.ValidationError):
            decoder.decode(b'{"type":"test.Renamed","schema":2}')  # a current shape missing a field: refused
    finally:
        UPCASTS.pop("test.Renamed")
