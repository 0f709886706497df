"""Every command shape of every game, valid-shaped and mutated, sent through the real engine at random points of
random games (issue #8, "The proof, kept").

A Hypothesis state machine creates a game of a random title, seat count and options (fuzzed too) through
``services.engine.service.Engine`` on the test Redis, fills it, then interleaves random legal play with batches of
fuzzed commands (``tests/fuzz/strategies.py``) from awaited and other seats, with right, wrong or missing tokens
and expected versions. For every command:

- it gets exactly one answer, ``accepted`` or ``rejected`` with a stable code (``[a-z_]+``) and a message;
- nothing raises out of the engine;
- a refused command changes nothing: the game's stream keeps its length, the answer names the current version;
- an accepted one was in the domain's ``legal_commands`` for that seat (awaited, with its token), and every such
  legal command is accepted: ``decide`` accepts exactly the legal ones;
- undo commands too (issue #10; the table's undo policy drawn at creation): ``RequestUndo`` is accepted exactly
  when its version is one the seat's view offers (``tbl.undo_targets``), ``AcceptUndo`` when a request waits on
  that seat, ``DeclineUndo`` also from the requester; the mirror table folds every event with its origin;
- resending a batch under the same command ids gets the same answers and appends nothing;
- no command is parked (``souk:parked`` stays empty).
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import itertools
import logging
import re
import time
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
import structlog
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from contracts.envelope import CommandEnvelope, Reply
from contracts.table import (
    TABLE_COMMANDS,
    UNDO_COMMANDS,
    UNDO_POLICIES,
    AcceptUndo,
    CreateGame,
    DeclineUndo,
    JoinSeat,
    LeaveSeat,
    RequestUndo,
)
from domain import table as tbl
from domain.kernel import games
from services.store import codec
from services.store import keys
from services.store.codec import command_decoder, encoder, event_decoder
from services.engine.service import Engine
from services.store.events import RedisEventStore
from tests.fuzz import budget
from tests.fuzz.strategies import HUGE_INTS, command_body, valid_shaped

CODE = re.compile(r"[a-z][a-z0-9_]*")
GAMES = games()
SPECS = [(name, seats) for name, game in GAMES.items() for seats in range(game.min_seats, game.max_seats + 1)]


def token_hash(seat: int) -> str:
    return hashlib.sha256(f"fuzz-token-{seat}".encode()).hexdigest()


def options_strategy(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """The game's options: the defaults; one option changed to a value of its type (at the rules' limits, or
    past them); every option drawn; an unknown option; huge numbers."""
    game = GAMES[name]
    info = msgspec.inspect.type_info(game.options_type)
    values = {f.encode_name: st.one_of(valid_shaped(f.type, game), _near(f.default)) for f in info.fields}
    if not values:  # a game without options (Istanbul): none, or an unknown one
        return st.one_of(st.just({}), st.just({"no_such_option": 1}))
    one = st.sampled_from(sorted(values)).flatmap(lambda key: values[key].map(lambda value: {key: value}))
    every = st.fixed_dictionaries({}, optional=values)
    return st.one_of(st.just({}), one, one, every, every.map(lambda o: {**o, "no_such_option": 1}),
                     st.fixed_dictionaries({}, optional={f.encode_name: st.sampled_from(HUGE_INTS) for f in info.fields}))


def _near(default: Any) -> st.SearchStrategy[Any]:
    """Values next to an option's default: its type's edges, where the rules' limits are."""
    if isinstance(default, bool) or not isinstance(default, int):
        return st.just(default)
    return st.integers(max(0, default // 4), default * 4)


class Figures:
    def __init__(self) -> None:
        self.games = 0
        self.finished = 0
        self.legal = 0
        self.fuzzed = 0
        self.resent = 0
        self.options_refused = 0
        self.odd_options = 0  # games created with fuzzed options the rules took
        self.answers: collections.Counter[str] = collections.Counter()
        self.fuzzed_accepted = 0
        self.undos: collections.Counter[str] = collections.Counter()  # undo commands sent, by kind and answer


def test_the_engine_answers_every_command_once_and_accepts_exactly_the_legal_ones(redis_url):
    loop = asyncio.new_event_loop()
    redis = aioredis.Redis.from_url(redis_url)
    engine = Engine(redis, RedisEventStore(redis))
    run = loop.run_until_complete
    figures = Figures()
    ids = itertools.count()

    class EngineFuzz(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.game_id = ""
            self.table = tbl.EMPTY
            self.since: tuple[int, ...] = ()  # by seat, since when it is awaited (the engine's stale rule)

        # --- helpers ------------------------------------------------------------------------------------

        def send(self, envs: list[CommandEnvelope]) -> list[Reply]:
            """One engine batch; checks every answer against the domain, and advances the mirror table."""
            length = run(redis.xlen(keys.game_stream(self.game_id)))
            assert length == self.table.version
            replies = run(engine.handle(envs))
            assert len(replies) == len(envs), "not one answer per command"
            for env, reply in zip(envs, replies):
                assert (reply.command_id, reply.game_id) == (env.command_id, env.game_id)
                assert reply.status in ("accepted", "rejected"), reply
                legal = self.legal(env)
                figures.answers[reply.status if reply.status == "accepted" else reply.code] += 1
                if reply.status == "rejected":
                    assert CODE.fullmatch(reply.code) and reply.message, reply
                    # the engine answers a decision that raised "command_failed": a bug in the rules all the same
                    assert reply.code not in ("command_failed", "game_unreadable"), (bytes(env.body), reply)
                    assert reply.version == self.table.version, reply
                    assert not legal, f"a legal command was refused: {bytes(env.body)!r} from seat {env.seat}: {reply}"
                else:
                    assert legal, (f"an illegal command was accepted at version {self.table.version}: "
                                   f"{bytes(env.body)!r} from seat {env.seat}: {reply}")
                    before = self.table.version
                    self.advance(reply.version)
                    assert reply.version == self.table.version and reply.events == reply.version - before, reply
            assert run(redis.xlen(keys.game_stream(self.game_id))) == self.table.version, "a refusal appended"
            return replies

        def advance(self, upto: int | None = None) -> None:
            """Folds the game's stored events into the mirror (those up to ``upto``: one command's, in a batch)."""
            stored = [env for env in run(engine.store.read(self.game_id, after=self.table.version))
                      if upto is None or env.seq <= upto]
            for i, env in enumerate(stored):
                before = self.table if i == 0 or not codec.same_command(stored[i - 1], env) else before
                game = self.table.game or codec.game_name(env)
                self.table = tbl.evolve(self.table, event_decoder(game).decode(env.payload),
                                        tbl.Origin(env.seat, env.command_id))
                if i + 1 == len(stored) or not codec.same_command(env, stored[i + 1]):  # a command's last event
                    seat = None if env.type == "table.SeatJoined" else env.seat
                    self.since = tbl.awaited_since(self.since, before, self.table, seat)

        def legal(self, env: CommandEnvelope) -> bool:
            """Whether the domain says this command may be played now (the engine must accept exactly those)."""
            table = self.table
            if table.status != tbl.PLAYING or env.seat is None or not 0 <= env.seat < table.seats:
                return False
            if env.token_hash != token_hash(env.seat):
                return False
            if env.expected_version is not None and env.expected_version != table.version and not (
                    self.since[env.seat] <= env.expected_version < table.version):  # an answer of the same step
                return False
            try:
                command = command_decoder(table.game).decode(env.body)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
                return False
            if tbl.out_reason(table, env.seat):  # resigned: bots play it (the clock worker's, not here)
                return False
            if isinstance(command, LeaveSeat):  # after the start, a resignation (issue #19)
                return True
            if isinstance(command, TABLE_COMMANDS):
                return False
            if isinstance(command, UNDO_COMMANDS):  # they need the seat's token, not its turn
                return self.undo_legal(env.seat, command)
            game = GAMES[table.game]
            if env.seat not in game.flow(table.state).awaiting:
                return False
            return command in game.legal_commands(table.state, env.seat)

        def undo_legal(self, seat: int, command: Any) -> bool:
            table = self.table
            if isinstance(command, RequestUndo):
                return command.to_version in tbl.undo_targets(table, seat)
            request = table.request
            if request is None:
                return False
            if isinstance(command, DeclineUndo) and seat == request.seat:  # a withdrawal
                return True
            return seat in request.asked and seat not in request.accepted

        def envelope(self, body: bytes, seat: int | None, token: str | None, expected: int | None = None):
            return CommandEnvelope(f"fz-{next(ids)}", self.game_id, msgspec.Raw(body), seat=seat, token_hash=token,
                                   expected_version=expected)

        # --- rules --------------------------------------------------------------------------------------

        @initialize(spec=st.sampled_from(SPECS), data=st.data())
        def start(self, spec, data) -> None:
            name, seats = spec
            options = data.draw(options_strategy(name), label="options")
            undo = data.draw(st.sampled_from([None, *UNDO_POLICIES, "with_consent"]), label="undo")
            if undo is not None:
                options = {**options, "undo": undo}
            # a chosen seed: the game's chance must follow from the draws, or Hypothesis cannot replay an example
            seed = data.draw(st.binary(min_size=32, max_size=32), label="seed").hex()
            self.game_id = f"fuzz-{next(ids)}"
            figures.games += 1
            create = CreateGame(name, f"fuzz {name}", seats, options, seed, unfair=True)
            [reply] = run(engine.handle([self.envelope(encoder.encode(create), None, None)]))
            if reply.status != "accepted":  # options the rules refuse: then the defaults
                assert reply.code in ("bad_options", "option_unsupported") and options, reply
                figures.options_refused += 1
                options = {} if undo is None else {"undo": undo}
                create = CreateGame(name, f"fuzz {name}", seats, options, seed, unfair=True)
                [reply] = run(engine.handle([self.envelope(encoder.encode(create), None, None)]))
            assert reply.status == "accepted", reply
            figures.odd_options += bool(set(options) - {"undo"})
            self.advance()
            joins = [self.envelope(encoder.encode(JoinSeat(f"p{s}", token_hash(s))), None, None) for s in range(seats)]
            replies = run(engine.handle(joins))
            assert [r.status for r in replies] == ["accepted"] * seats, replies
            self.advance()
            assert self.table.status == tbl.PLAYING

        @precondition(lambda self: self.table.status == tbl.PLAYING)
        @rule(steps=st.integers(1, 60), pick=st.randoms(use_true_random=False), together=st.booleans())
        def play_legal(self, steps, pick, together) -> None:
            """Random legal commands; ``together``: one from every awaited seat in one engine batch."""
            game = GAMES[self.table.game]
            for _ in range(steps):
                if self.table.status != tbl.PLAYING:
                    figures.finished += 1
                    return
                awaiting = game.flow(self.table.state).awaiting
                assert awaiting, "a game in play awaits nobody"
                awaiting = [s for s in awaiting if not tbl.out_reason(self.table, s)]
                if not awaiting:  # only resigned seats are awaited: bots would play them (no clock worker here)
                    return
                seats = list(awaiting) if together else [pick.choice(awaiting)]
                envs = [self.envelope(encoder.encode(pick.choice(list(game.legal_commands(self.table.state, s)))),
                                      s, token_hash(s), pick.choice([None, self.table.version])) for s in seats]
                figures.legal += len(envs)
                self.send(envs)

        def undo_offered(self) -> bool:
            table = self.table
            return table.status == tbl.PLAYING and (table.request is not None
                                                    or any(tbl.undo_targets(table, s) for s in range(table.seats)))

        @precondition(undo_offered)
        @rule(data=st.data())
        def undo_as_offered(self, data) -> None:
            """A request for a version a seat's view offers, or an answer from a seat the pending request waits
            on (accept, decline, or the requester's withdrawal)."""
            table = self.table
            request = table.request
            if request is None:
                seat = data.draw(st.sampled_from([s for s in range(table.seats) if tbl.undo_targets(table, s)]),
                                 label="undo seat")
                body: Any = RequestUndo(data.draw(st.sampled_from(tbl.undo_targets(table, seat)), label="to_version"))
            else:
                waiting = [s for s in request.asked if s not in request.accepted]
                seat, body = data.draw(st.sampled_from([(s, AcceptUndo()) for s in waiting] * 3
                                                       + [(s, DeclineUndo()) for s in waiting]
                                                       + [(request.seat, DeclineUndo())]), label="answer")
            self.send_undo(body, seat, token_hash(seat), data.draw(st.sampled_from([None, table.version])))

        @precondition(lambda self: self.table.status == tbl.PLAYING)
        @rule(data=st.data())
        def undo(self, data) -> None:
            """Any undo command: any version, any seat, another seat's token, a stale version."""
            table = self.table
            seat = data.draw(st.integers(0, table.seats - 1), label="undo seat")
            kind = data.draw(st.sampled_from(["request", "accept", "decline"]), label="undo kind")
            if kind == "request":
                body: Any = RequestUndo(data.draw(st.one_of(
                    st.integers(table.version - 12, table.version + 1),
                    st.sampled_from([0, -1, 2**63 - 1])), label="to_version"))
            else:
                body = AcceptUndo() if kind == "accept" else DeclineUndo()
            token = data.draw(st.sampled_from([token_hash(seat)] * 3 + [token_hash((seat + 1) % table.seats)]),
                              label="undo token")
            self.send_undo(body, seat, token, data.draw(st.sampled_from([None, None, table.version,
                                                                         table.version - 1])))

        def send_undo(self, body: Any, seat: int, token: str, expected: int | None) -> None:
            [reply] = self.send([self.envelope(encoder.encode(body), seat, token, expected)])
            kind = type(body).__name__
            figures.undos[f"{kind} {reply.status if reply.status == 'accepted' else reply.code}"] += 1

        @rule(data=st.data())
        def fuzz(self, data) -> None:
            """A batch of 1 to 6 fuzzed commands, from any seat, with any token; resent whole now and then."""
            game = GAMES[self.table.game]
            seats = self.table.seats
            awaiting = list(game.flow(self.table.state).awaiting) if self.table.status == tbl.PLAYING else []
            envs = []
            for _ in range(data.draw(st.integers(1, 6), label="batch")):
                seat = data.draw(st.one_of(st.sampled_from(awaiting or [0]), st.integers(0, seats - 1),
                                           st.sampled_from([None, -1, seats, 2**63 - 1])), label="seat")
                own = token_hash(seat) if isinstance(seat, int) and seat >= 0 else None
                token = data.draw(st.one_of(st.just(own), st.just(own), st.just(own), st.none(),
                                            st.sampled_from([token_hash(0), token_hash(seats - 1), "", "x" * 64])),
                                  label="token")
                legal = list(game.legal_commands(self.table.state, seat)) \
                    if self.table.status == tbl.PLAYING and seat in range(seats) else []
                body = data.draw(command_body(game, legal), label="body")
                expected = data.draw(st.one_of(st.none(), st.none(), st.just(self.table.version),
                                               st.sampled_from([0, self.table.version - 1, 2**63 - 1])),
                                     label="expected_version")
                envs.append(self.envelope(body, seat, token, expected))
            figures.fuzzed += len(envs)
            before = self.table.version
            replies = self.send(envs)
            figures.fuzzed_accepted += sum(r.status == "accepted" for r in replies)
            if data.draw(st.integers(0, 9), label="resend") == 0:
                figures.resent += len(envs)
                version = self.table.version
                again = run(engine.handle(envs))
                assert again == replies, "a resent command got another answer"
                assert run(redis.xlen(keys.game_stream(self.game_id))) == version
                assert before <= version

        @invariant()
        def nothing_is_parked(self) -> None:
            assert run(redis.xlen(keys.PARKED)) == 0, run(redis.xrange(keys.PARKED))

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # refusals: info
    started = time.monotonic()
    try:
        run_state_machine_as_test(EngineFuzz, settings=budget.state_machine(14, steps=60))
    finally:
        run(redis.aclose())
        loop.close()
    answers = dict(figures.answers.most_common())
    print(f"\nengine fuzz: {figures.games} games ({figures.finished} played to the end, {figures.options_refused} "
          f"with fuzzed options refused, {figures.odd_options} played with fuzzed options), {figures.legal} legal commands, {figures.fuzzed} fuzzed commands "
          f"({figures.fuzzed_accepted} of them accepted as legal), {figures.resent} resent, "
          f"{time.monotonic() - started:.1f} s; answers: {answers}; undo commands: {dict(figures.undos)}")
    assert figures.fuzzed and figures.finished
    assert figures.undos["RequestUndo accepted"], "no undo was exercised against the engine"


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-s"])
