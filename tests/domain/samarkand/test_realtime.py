"""The real-time countdown, through the game's timer hooks (``timer``, ``tick``) with explicit times.

``Clock`` below is what the table does with the hooks (design-19.md, "Game timers"), reduced to the game: after
every command it asks ``timer(state)``; a new key is due ``seconds`` after that instant, the same key keeps its due;
before a command at ``t``, every timer due at or before ``t`` has run out (``tick``). Times are plain numbers.

Four players unless said: seat 0 sells carpets, 1 spices, 2 fruits, 3 jewels; the dean is seat 0; revealed cards
7, 5, 3, 1; the face-up camel is a 3; each seat has 15 dirhams; each value shows for 1.5 s.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from contracts.samarkand import (
    Answered,
    CamelBought,
    ChooseCard,
    Goods,
    GoodsBought,
    GoodsDisputed,
    Options,
    Pass,
    RoundEnded,
    RoundStarted,
    Stop,
    StopCall,
    ValueClosed,
)
from contracts.table import CreateGame
from domain import table as tbl
from domain.chance import Chance
from domain.kernel import RuleViolation
from domain.samarkand import GAME, data, rules
from tests.domain.samarkand.support import ensure_registered, market, reveal, spec

ensure_registered()

INTERVAL_MS = 1500
REALTIME = {"countdown_mode": "realtime", "countdown_interval_ms": INTERVAL_MS}
OPEN = market(4) + reveal((7, 5, 3, 1))


class Clock:
    """A game driven by its own timer at explicit instants: ``at(t, seat, command)``, ``until(t)``."""

    def __init__(self, state: rules.State, now: float = 0.0, seed: bytes = b"realtime") -> None:
        self.state, self.now, self.seed, self.position = state, now, seed, 1
        self.events: list[Any] = []
        self.ticks: list[tuple[str, float]] = []  # (key, due) of every tick fired
        self.due: float | None = None
        self.key: str | None = None
        self._timer()

    def _timer(self) -> None:
        timer = GAME.timer(self.state)
        if timer is None:
            self.key = self.due = None
        elif timer[0] != self.key:
            self.key, self.due = timer[0], self.now + timer[1]

    def _apply(self, events: list[Any]) -> list[Any]:
        for event in events:
            self.state = GAME.evolve(self.state, event)
        self.events.extend(events)
        self.position += 1
        self._timer()
        return events

    def until(self, t: float) -> None:
        """Every timer due at or before ``t`` runs out, in order."""
        while self.due is not None and self.due <= t:
            self.now = self.due
            self.ticks.append((self.key, self.due))  # type: ignore[arg-type]
            self._apply(list(GAME.tick(self.state, self.key, Chance(self.seed, self.position))))
        self.now = t

    def at(self, t: float, seat: int, command: Any) -> list[Any]:
        self.until(t)
        return self._apply(list(GAME.decide(self.state, seat, command, Chance(self.seed, self.position))))


def realtime(events: list | None = None, **options) -> rules.State:
    return spec(4, OPEN if events is None else events, **{**REALTIME, **options}).state


def test_the_value_shown_is_the_timer_and_it_lasts_the_tables_interval():
    state = realtime()
    assert GAME.timer(state) == ("1:10", 1.5)
    assert GAME.view(state, 2).value == 10 and GAME.view(state, None).value == 10


def test_the_stepwise_countdown_and_the_choice_have_no_timer():
    assert GAME.timer(spec(4, OPEN).state) is None
    assert GAME.timer(spec(4, market(4), **REALTIME).state) is None  # choosing a card is not timed by the rules


def test_nobody_passes_in_real_time_the_legal_commands_are_the_stops():
    state = realtime()
    assert GAME.legal_commands(state, 1) == [Stop(target=t) for t in (0, 2, 3, "camel")]
    with pytest.raises(RuleViolation) as exc:
        GAME.decide(state, 1, Pass(), Chance(b"s", 1))
    assert exc.value.code == "no_pass_in_realtime"


def test_nobody_stopping_shows_ten_down_to_one_each_for_the_interval_and_the_round_ends_at_zero():
    clock = Clock(realtime(), now=100.0)
    clock.until(100.0 + 10 * 1.5 - 0.001)
    assert clock.state.value == 1 and clock.state.phase == rules.COUNTDOWN
    clock.until(100.0 + 10 * 1.5)
    assert clock.ticks == [(f"1:{v}", 100.0 + (11 - v) * 1.5) for v in range(10, 0, -1)]
    assert clock.events[:10] == [ValueClosed(value=v) for v in range(10, 0, -1)]
    assert RoundEnded(round=1, discarded=(Goods("carpets", 7), Goods("spices", 5), Goods("fruits", 3),
                                          Goods("jewels", 1))) in clock.events
    assert RoundStarted(round=2, dean=1) in clock.events
    assert clock.state.phase == rules.CHOOSING and GAME.timer(clock.state) is None


def test_a_stop_is_recorded_and_waits_for_the_values_time_to_run_out():
    clock = Clock(realtime())
    assert clock.at(0.4, 1, Stop(target=0)) == [Answered(seat=1, value=10, stop=True, target=0)]
    assert clock.state.value == 10 and clock.key == "1:10" and clock.due == 1.5  # the same value, the same due
    assert GAME.flow(clock.state).awaiting == (0, 2, 3) and GAME.legal_commands(clock.state, 1) == []
    clock.until(1.5)
    assert clock.events[1:] == [ValueClosed(value=10, stops=(StopCall(seat=1, target=0),)),
                                GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=10)]
    assert clock.state.value == 9 and clock.due == 3.0


def test_the_stops_received_while_a_value_shows_are_simultaneous_however_far_apart():
    clock = Clock(realtime())  # seat 1 at once, seat 2 at the last moment: still a dispute, not first come
    clock.at(0.01, 1, Stop(target=3))
    clock.at(1.49, 2, Stop(target=3))
    clock.until(1.5)
    assert clock.events[-2:] == [
        ValueClosed(value=10, stops=(StopCall(seat=1, target=3), StopCall(seat=2, target=3))),
        GoodsDisputed(seats=(1, 2), seller=3, kind="jewels", value=1, price=10, payment=5),
    ]


def test_the_dean_wins_a_dispute_of_one_value_even_when_his_stop_came_last():
    clock = Clock(realtime())
    clock.at(0.1, 2, Stop(target=1))
    clock.at(1.4, 0, Stop(target=1))
    clock.until(1.5)
    assert clock.events[-1] == GoodsBought(buyer=0, seller=1, kind="spices", value=5, price=10, disputants=(0, 2))  # seat order: not arrival


def test_a_stop_after_the_values_time_ran_out_stops_the_next_value():
    clock = Clock(realtime())
    clock.at(1.6, 1, Stop(target=0))
    assert clock.events[0] == ValueClosed(value=10)
    clock.until(3.0)
    assert clock.events[-1] == GoodsBought(buyer=1, seller=0, kind="carpets", value=7, price=9)


def test_when_every_eligible_seat_has_stopped_the_value_closes_at_once_and_the_next_gets_the_whole_interval():
    clock = Clock(realtime())
    clock.at(0.1, 0, Stop(target="camel"))
    clock.at(0.2, 1, Stop(target=0))
    clock.at(0.3, 2, Stop(target=0))
    events = clock.at(0.5, 3, Stop(target=2))
    assert events[1] == ValueClosed(value=10, stops=(StopCall(0, "camel"), StopCall(1, 0), StopCall(2, 0),
                                                     StopCall(3, 2)))
    assert clock.ticks == [] and clock.key == "1:9" and clock.due == 0.5 + 1.5
    assert CamelBought(buyer=0, capacity=3, price=10) in events


def test_one_stop_per_seat_per_value():
    clock = Clock(realtime())
    clock.at(0.1, 1, Stop(target=0))
    with pytest.raises(RuleViolation) as exc:
        clock.at(0.2, 1, Stop(target=2))
    assert exc.value.code == "already_answered"
    clock.at(1.6, 1, Stop(target=2))  # the next value: it may stop again
    assert clock.state.players[1].stop == 2


def test_a_stop_shows_who_stopped_and_hides_what_until_the_value_closes():
    clock = Clock(realtime())
    [stop] = clock.at(0.3, 1, Stop(target=0))
    assert GAME.redact(stop, 2) == Answered(seat=1, value=10, stop=None, target=None)
    assert GAME.redact(stop, None) == Answered(seat=1, value=10, stop=None, target=None)
    assert GAME.redact(stop, 1) == stop
    assert GAME.view(clock.state, 2).players[1].has_answered and GAME.view(clock.state, 2).you.target is None
    assert GAME.view(clock.state, 1).you.target == 0
    clock.until(1.5)
    assert GAME.redact(clock.events[1], 2).stops == (StopCall(seat=1, target=0),)


def test_a_tick_for_a_value_no_longer_shown_is_not_due():
    clock = Clock(realtime())
    clock.until(1.5)
    for key in ("1:10", "2:9", ""):
        with pytest.raises(RuleViolation) as exc:
            GAME.tick(clock.state, key, Chance(b"s", 1))
        assert exc.value.code == "not_due"
    with pytest.raises(RuleViolation) as exc:
        GAME.tick(spec(4, OPEN).state, "1:10", Chance(b"s", 1))  # stepwise: no timer at all
    assert exc.value.code == "not_due"


def test_the_real_time_countdown_is_accepted_at_creation_with_an_interval_in_range():
    def create(options: dict) -> list:
        return tbl.decide(tbl.EMPTY, None, None, CreateGame(game="samarkand", title="rt", seats=4, options=options),
                          Chance(b"s", 0))

    assert create(REALTIME)
    for ms in (data.COUNTDOWN_INTERVAL_MS[0] - 1, data.COUNTDOWN_INTERVAL_MS[1] + 1):
        with pytest.raises(RuleViolation) as exc:
            create({**REALTIME, "countdown_interval_ms": ms})
        assert exc.value.code == "bad_options"


def test_the_hidden_goods_variant_is_refused_in_real_time_where_who_stops_is_seen():
    with pytest.raises(RuleViolation) as exc:
        rules.check_options(4, Options(countdown_mode="realtime", hidden_goods=True))
    assert exc.value.code == "option_unsupported" and "hidden-goods" in exc.value.message


def candidates(state: rules.State) -> list:
    targets = [*range(-1, state.seats + 1), "bank", "camel"]
    return [Pass(), ChooseCard(value=1)] + [Stop(target=t) for t in targets]


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_a_whole_real_time_game_at_random_instants_ends_and_replays(seats):
    """Seats stop at random instants (rarely: most values run out); the choice and the scoring take a random
    time. Every legal command is accepted and nothing else; the events replay to the same state."""
    rng = random.Random(seats)
    options = Options(countdown_mode="realtime", countdown_interval_ms=INTERVAL_MS)
    setup = list(GAME.setup(seats, options, Chance(b"rt", 0)))
    clock = Clock(rules.fold(GAME.initial_state(seats, options), setup))
    t = 0.0
    while GAME.result(clock.state) is None:
        t += rng.expovariate(1 / 0.8)
        clock.until(t)
        if GAME.result(clock.state) is not None:
            break
        state = clock.state
        awaited = GAME.flow(state).awaiting
        if state.phase == rules.COUNTDOWN:
            for seat in range(seats):
                legal = GAME.legal_commands(state, seat)
                assert bool(legal) == (seat in awaited) and Pass() not in legal
                for command in candidates(state):
                    try:
                        GAME.decide(state, seat, command, Chance(b"x", 0))
                        ok = True
                    except RuleViolation:
                        ok = False
                    assert ok == (command in legal), (seat, command)
            if not awaited or rng.random() < 0.7:
                continue  # nobody stops now: the value may run out
        else:
            assert awaited and GAME.timer(state) is None, state.phase
        seat = rng.choice(awaited)
        clock.at(t, seat, rng.choice(GAME.legal_commands(state, seat)))
    assert clock.state.phase == rules.OVER and clock.state.round == data.ROUNDS
    assert clock.ticks and all(key.count(":") == 1 for key, _ in clock.ticks)
    replayed = rules.fold(GAME.initial_state(seats, options), setup + clock.events)
    assert msgspec.json.encode(replayed) == msgspec.json.encode(clock.state)
