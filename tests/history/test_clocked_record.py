"""The record of a game played with clocks (issue #19) verifies: ``souk verify`` re-runs each command at the instant
the engine decided it (its events' recorded_at), so the clocks' events come out byte for byte; a record whose
instants were changed (and hashed again, as a forger would) does not."""

from __future__ import annotations

import random

from contracts.table import CreateGame, JoinSeat
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import get_game
from services.engine.sealing import seal_events
from services.history import record as records
from services.history.verify import verify_record
from services.store.codec import stored_command
from tests.domain.harness import token_hash
from tests.history.test_verify import edited

SEED = bytes(range(32))
CLOCK = {"per_decision": 20, "reserve": 120, "increment": 3, "on_timeout": "bot"}


def clocked_record(seed: int = 3) -> records.Record:
    """A two-seat Yspahan game with clocks played to its end through the rules, sealed as the engine seals it, each
    command at its own instant (a few seconds apart, some past per_decision)."""
    rng = random.Random(seed)
    game = get_game("yspahan")
    table, head, envelopes, commands = tbl.EMPTY, "0" * 64, [], {}
    now = 1764250000.0

    def apply(seat, token, command):
        nonlocal table, head
        events = tbl.decide(table, seat, token, command, Chance(SEED, table.version), now=now)
        body = stored_command(table.game or command.game, command)
        sealed = seal_events(table, events, game_id="clocked", command_id=f"c{len(commands)}", seat=seat,
                             recorded_at=now, head=head, seed=SEED, body=body)
        commands[len(envelopes) + 1] = body
        envelopes.extend(sealed.envelopes)
        table, head = sealed.table, sealed.head

    apply(None, None, tbl.newest_rules(CreateGame("yspahan", "clocked", 2, {"clock": CLOCK})))
    for seat in range(2):
        apply(None, None, JoinSeat(f"p{seat}", token_hash(seat)))
    while table.status != tbl.OVER:
        seat = rng.choice(tbl.flow(table).awaiting)
        now += rng.choice((0.5, 4.0, 12.25, 31.5))
        apply(seat, token_hash(seat), rng.choice(game.legal_commands(table.state, seat)))
    assert sum(e.type == "table.ClocksSet" for e in envelopes) > 10
    return records.make("clocked", envelopes, SEED, commands=commands)


def test_the_record_of_a_game_with_clocks_verifies_with_every_command_re_run_at_its_instant():
    record = clocked_record()
    verdict = verify_record(record)
    assert verdict.ok, verdict.problems
    assert verdict.rerun == len(record.events)


def test_a_record_whose_instants_were_changed_and_hashed_again_is_caught_by_the_re_run():
    record = clocked_record()
    at = next(i for i, e in enumerate(record.events) if e.type == "table.ClocksSet" and i > 10)

    def later(document):  # the command before that ClocksSet said it was decided a minute later
        for event in document["events"]:
            if event["command_id"] == record.events[at].command_id:
                event["recorded_at"] += 60.0

    verdict = verify_record(edited(record, later, rehash=True))
    assert not verdict.ok and verdict.first_difference == record.events[at].seq
    assert verdict.problems[0].startswith(f"event {record.events[at].seq} (table.ClocksSet) differs")
