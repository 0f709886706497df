"""The strategies over the kernel: every one plays every game with legal commands, by name, seeded."""

from __future__ import annotations

import random
from typing import NamedTuple

import pytest

from services.bots import strategy
from services.bots.strategies import StrategyError
from tests.bots.support import advanced, started

GAMES = [("karawane", 2), ("samarkand", 3), ("istanbul", 2), ("yspahan", 2)]
FAST = {"random": {}, "greedy": {"samples": 2}, "mcts": {"budget": None, "iterations": 8, "rollout": 10},
        "seeker": {}}


@pytest.mark.parametrize("name,seats", GAMES)
@pytest.mark.parametrize("kind", sorted(FAST))
def test_every_strategy_answers_a_legal_command_in_every_game(name, seats, kind):
    bot = strategy(kind, **FAST[kind])
    for commands in (0, 7, 40):
        game, state = advanced(name, seats, seed=3, commands=commands)
        for seat in game.flow(state).awaiting:
            command = bot.choose(game, state, seat, random.Random(1))
            assert command in game.legal_commands(state, seat)


@pytest.mark.parametrize("name,seats", GAMES)
def test_the_same_seed_gives_the_same_choice(name, seats):
    game, state = advanced(name, seats, seed=5, commands=12)
    seat = game.flow(state).awaiting[0]
    for kind in ("greedy", "mcts"):
        bot = strategy(kind, **FAST[kind])
        first = [bot.choose(game, state, seat, random.Random(k)) for k in range(3)]
        assert first == [bot.choose(game, state, seat, random.Random(k)) for k in range(3)]


def test_mcts_stops_at_its_time_budget():
    now = [0.0]

    def clock():
        now[0] += 0.01  # every reading 10 ms later: a budget of 0.05 s allows a handful of iterations
        return now[0]

    bot = strategy("mcts", budget=0.05, iterations=10_000, rollout=5, clock=clock)
    game, state = started("yspahan", 2, seed=1)
    bot.choose(game, state, game.flow(state).awaiting[0], random.Random(0))
    assert 1 <= bot.last_iterations <= 5


def test_mcts_finds_a_winning_move_a_random_one_would_miss():
    """Yspahan at its start: a few hundred iterations prefer a command that is not the first legal one in most
    seeds (the search is not a constant)."""
    game, state = started("yspahan", 2, seed=2)
    seat = game.flow(state).awaiting[0]
    legal = game.legal_commands(state, seat)
    bot = strategy("mcts", budget=None, iterations=60, rollout=20)
    chosen = {repr(bot.choose(game, state, seat, random.Random(k))) for k in range(4)}
    assert chosen <= {repr(c) for c in legal}


@pytest.mark.parametrize("name,settings,code", [
    ("minimax", {}, "unknown_strategy"),
    ("mcts", {"budget": 0}, "bad_setting"),
    ("mcts", {"iterations": 0}, "bad_setting"),
    ("mcts", {"policy": "minimax"}, "bad_setting"),
    ("mcts", {"search": "everyone"}, "bad_setting"),
    ("greedy", {"samples": 0}, "bad_setting"),
    ("greedy", {"depth": 2}, "bad_setting"),
])
def test_a_bad_strategy_or_setting_is_refused_with_a_code(name, settings, code):
    with pytest.raises(StrategyError) as info:
        strategy(name, **settings)
    assert info.value.code == code and info.value.message


def test_a_game_without_the_hooks_is_refused_by_the_strategies_that_need_them():
    class Bare:
        title = "Bare"

        def legal_commands(self, state, seat):
            return ["a", "b"]

    with pytest.raises(StrategyError) as info:
        strategy("greedy").choose(Bare(), object(), 0, random.Random(0))
    assert info.value.code == "no_hook"
    assert strategy("random").choose(Bare(), object(), 0, random.Random(0)) in ("a", "b")


@pytest.mark.parametrize("name,seats,least", [("samarkand", 3, 7), ("istanbul", 2, 9)])
def test_greedy_beats_random_where_seats_choose_at_once(name, seats, least):
    """Samarkand's cards put face down and Istanbul's answers are chosen by every seat at once: a choice alone
    changes nothing until the others are in, so greedy rates it once the others answered (``settle``); rated
    alone, every command looked the same and greedy played at random (it won 37% and 42% of 100 games)."""
    from services.bench.bots import bench

    summary = bench(name, seats, 12, ("greedy", "random"), {"greedy": {"samples": 2}}, seed=11)
    assert summary["wins_a"] >= least, summary


@pytest.mark.slow
@pytest.mark.parametrize("name,seats", GAMES)
def test_a_whole_game_of_mcts_against_greedy_ends(name, seats):
    from services.bench.bots import play

    bots = [strategy("mcts", budget=None, iterations=6, rollout=8), *(strategy("greedy", samples=1)
                                                                       for _ in range(seats - 1))]
    out = play(name, seats, bots, seed=7, bound=20_000)
    assert out["winners"], out


@pytest.mark.parametrize("name,seats", GAMES)
def test_mcts_searches_the_best_rated_commands_at_its_root(name, seats):
    from services.bots.strategies import forecast, rate

    for commands in (3, 25):
        game, state = advanced(name, seats, seed=8, commands=commands)
        seat = game.flow(state).awaiting[0]
        legal = list(game.legal_commands(state, seat))
        if len(legal) < 2:
            continue
        values = rate(game, state, seat, legal, 1, random.Random(4), forecast(game))  # by the outlook
        chosen = strategy("mcts", budget=None, iterations=4, rollout=4, width=1).choose(game, state, seat,
                                                                                       random.Random(4))
        assert values[legal.index(chosen)] == max(values)


def test_a_width_below_one_is_refused():
    with pytest.raises(StrategyError) as info:
        strategy("mcts", width=0)
    assert info.value.code == "bad_setting"


class _Invest:
    """A two-seat toy: seat 0 plays twice, then seat 1 once, then the game ends. ``grab`` is worth 1 point at
    once; ``invest`` nothing at once but lets the next move ``cash`` 5. One step ahead (greedy) grabs; a search
    that looks at its own next decision invests. Seat 1's ``wait`` or ``poke`` (-1 to seat 0) is its own."""

    title = "Invest"

    def legal_commands(self, state, seat):
        turn, points, invested = state
        if turn == 0:
            return ["grab", "invest"]
        if turn == 1:
            return ["cash", "grab"] if invested else ["grab", "rest"]
        return ["wait", "poke"]

    def decide(self, state, seat, command, chance):
        return [command]

    def evolve(self, state, event):
        turn, points, invested = state
        gain = {"grab": 1, "cash": 5 if invested else 0, "poke": -1}.get(event, 0)
        return turn + 1, points + gain, invested or event == "invest"

    def flow(self, state):
        from contracts.table import Flow

        return Flow("play", () if state[0] > 2 else ((0,) if state[0] < 2 else (1,)))

    def result(self, state):
        from contracts.table import Result

        if state[0] <= 2:
            return None
        return Result(scores=(state[1], 3), winners=(0,) if state[1] > 3 else (1,))

    def evaluate(self, state, seat):
        return float(state[1] - 3) if seat == 0 else float(3 - state[1])

    def determinize(self, state, seat, rng):
        return state


def test_greedy_grabs_where_mcts_invests_in_its_own_next_decision():
    game, state = _Invest(), (0, 0, False)
    assert strategy("greedy").choose(game, state, 0, random.Random(0)) == "grab"
    bot = strategy("mcts", budget=None, iterations=60, rollout=0, width=None, exploration=1.4)
    assert [bot.choose(game, state, 0, random.Random(k)) for k in range(6)] == ["invest"] * 6


def test_the_other_seats_play_by_the_greedy_policy_outside_the_tree():
    """Seat 1 pokes (its evaluate prefers it) in every simulation: the tree holds only seat 0's decisions, so its
    values are seat 0's margins once seat 1 answered as greedy would."""
    from services.bots.strategies import policy

    game = _Invest()
    assert {policy(game, (2, 5, True), 1, random.Random(k)) for k in range(5)} == {"poke"}
    assert {policy(game, (2, 5, True), 1, random.Random(k), epsilon=1.0) for k in range(20)} == {"wait", "poke"}
    assert set(policy(game, (0, 0, False), 0, random.Random(k), sample=1) for k in range(20)) == {"grab", "invest"}


def test_mcts_values_a_cut_by_evaluate_and_a_won_game_above_a_lost_one_of_the_same_margin():
    from services.bots.strategies import value

    game = _Invest()
    assert value(game, (1, 2, False), 0) == -1.0  # not over: seat 0's margin
    assert value(game, (3, 5, True), 0) == 3.0 and value(game, (3, 5, True), 1) == -2.0  # over: + 1 to the winner


class _Foresight(_Invest):
    """``_Invest`` with an ``outlook`` hook (the score to be): having invested is worth 4 before it is cashed."""

    def outlook(self, state, seat):
        turn, points, invested = state
        margin = points + (4 if invested and turn < 2 else 0) - 3
        return float(margin if seat == 0 else -margin)


def test_mcts_values_its_cut_by_the_games_outlook_and_greedy_keeps_evaluate():
    from services.bots.strategies import value

    game = _Foresight()
    assert value(game, (1, 0, True), 0) == 1.0  # the outlook: 0 points, 4 to be, 3 behind
    assert value(_Invest(), (1, 0, True), 0) == -3.0
    assert strategy("greedy").choose(game, (0, 0, False), 0, random.Random(0)) == "grab"
    # one iteration a command, the look ahead stopped at seat 0's next decision: only the outlook sees the investment
    bot = strategy("mcts", budget=None, iterations=2, rollout=0, width=None, exploration=0.0)
    assert {bot.choose(game, (0, 0, False), 0, random.Random(k)) for k in range(4)} == {"invest"}
    assert {bot.choose(_Invest(), (0, 0, False), 0, random.Random(k)) for k in range(4)} == {"grab"}


class _Prepare:
    """One seat, two decisions: ``grab`` 1 point, or ``prepare`` nothing, after which one of eight commands,
    ``cash``, is worth 5 (the others nothing); 3 points win. A node below the root that adds its untried commands at
    random values ``prepare`` by a random one of the eight; added best first (``expand`` greedy), by ``cash``."""

    title = "Prepare"

    def legal_commands(self, state, seat):
        turn, points, prepared = state
        if turn == 0:
            return ["grab", "prepare"]
        return ["a", "b", "c", "d", "e", "f", "g", "cash"] if prepared else ["rest"]

    def decide(self, state, seat, command, chance):
        return [command]

    def evolve(self, state, event):
        turn, points, prepared = state
        return turn + 1, points + {"grab": 1, "cash": 5}.get(event, 0), prepared or event == "prepare"

    def flow(self, state):
        from contracts.table import Flow

        return Flow("play", (0,) if state[0] < 2 else ())

    def result(self, state):
        from contracts.table import Result

        if state[0] < 2:
            return None
        return Result(scores=(state[1],), winners=(0,) if state[1] > 3 else ())

    def evaluate(self, state, seat):
        return float(state[1] - 3)

    def determinize(self, state, seat, rng):
        return state


def test_mcts_adds_the_seats_best_rated_command_first_below_its_root_when_asked():
    game, state = _Prepare(), (0, 0, False)
    # four iterations: both root commands, grab's answer, then prepare's (the exploration term favours it)
    settings = dict(budget=None, iterations=4, rollout=0, width=None, exploration=10.0, sample=None)
    greedy = strategy("mcts", expand="greedy", **settings)
    assert [greedy.choose(game, state, 0, random.Random(k)) for k in range(4)] == ["prepare"] * 4
    chosen = [strategy("mcts", **settings).choose(game, state, 0, random.Random(k)) for k in range(4)]
    assert "grab" in chosen  # at random, cash is one of eight
    with pytest.raises(StrategyError) as info:
        strategy("mcts", expand="best")
    assert info.value.code == "bad_setting"


class _Pennies:
    """Both seats show heads or tails at once; seat 1 wins when they match. Whoever shows first in a simulation,
    the other's choice must not depend on it: seat 1 seeing seat 0's coin would match it every time."""

    title = "Pennies"

    def legal_commands(self, state, seat):
        return [] if state[seat] is not None else ["heads", "tails"]

    def decide(self, state, seat, command, chance):
        return [(seat, command)]

    def evolve(self, state, event):
        seat, coin = event
        return tuple(coin if s == seat else c for s, c in enumerate(state))

    def flow(self, state):
        from contracts.table import Flow

        return Flow("show", tuple(s for s, c in enumerate(state) if c is None))

    def result(self, state):
        from contracts.table import Result

        if None in state:
            return None
        return Result(scores=(0, 0), winners=(1,) if state[0] == state[1] else (0,))

    def evaluate(self, state, seat):
        result = self.result(state)
        return 0.0 if result is None else (1.0 if seat in result.winners else -1.0)

    def determinize(self, state, seat, rng):
        return tuple(c if s == seat else None for s, c in enumerate(state))  # the other's coin is face down


def test_the_other_seats_simultaneous_choice_is_planned_before_the_seat_shows_its_own():
    from services.bots.strategies import MctsStrategy, _Node

    game, bot, root = _Pennies(), MctsStrategy(budget=None, width=None, epsilon=0.0), _Node()
    rng = random.Random(3)
    for _ in range(60):
        bot._iterate(game, (None, None), 0, root, rng, ["heads", "tails"])
    # seat 1 matched about half the time (a loss: -1, a win: 1 + 1), not every time (-1 in every iteration)
    assert root.visits == 60 and root.total / root.visits > -0.5


class _Market:
    """Both seats answer at once (seat 0: ``buy`` 2 points and leave the market, or ``pass``; seat 1: ``wait``);
    a seat 0 that stayed then decides ten times more (``pass`` or ``hold``, worth nothing); last, seat 1
    ``grow``s 5 points. Buying is better (-3 at the end against -5), but valued at the seat's next decision, the
    pass (0, before the growth, which a small tree does not reach) would beat the buy (-3, after it)."""

    title = "Market"

    def legal_commands(self, state, seat):
        step = state[0]
        if seat not in self.flow(state).awaiting:
            return []
        if step == 1:
            return ["buy", "pass"] if seat == 0 else ["wait"]
        return ["grow"] if step == 12 else ["pass", "hold"]

    def decide(self, state, seat, command, chance):
        return [(seat, command)]

    def evolve(self, state, event):
        (seat, command), (step, p0, p1, acted, left) = event, state
        p0, p1 = p0 + 2 * (command == "buy"), p1 + 5 * (command == "grow")
        left, acted = left or command == "buy", acted | {seat}
        if step == 1:
            return ((12 if left else 2), p0, p1, frozenset(), left) if acted == {0, 1} else (1, p0, p1, acted, left)
        return step + 1, p0, p1, frozenset(), left

    def flow(self, state):
        from contracts.table import Flow

        step, _, _, acted, _ = state
        if step == 1:
            return Flow("answer", tuple(s for s in (0, 1) if s not in acted))
        return Flow("over", ()) if step > 12 else Flow("after", (1,) if step == 12 else (0,))

    def result(self, state):
        from contracts.table import Result

        if state[0] <= 12:
            return None
        return Result(scores=(state[1], state[2]), winners=(0,) if state[1] > state[2] else (1,))

    def evaluate(self, state, seat):
        return float(state[1] - state[2]) * (1 if seat == 0 else -1)

    def determinize(self, state, seat, rng):
        return state


def test_a_command_added_at_a_simultaneous_decision_is_valued_once_the_others_answered():
    """The first visit of each root command: the buy is valued once seat 1 answered (+2), not after the growth at
    the end (-3), which the pass, valued at the seat's next decision (0), would never see in a small tree."""
    from services.bots.strategies import MctsStrategy, _Node

    game, bot, root = _Market(), MctsStrategy(budget=None, width=None, epsilon=0.0), _Node()
    for _ in range(2):
        bot._iterate(game, (1, 0, 0, frozenset(), False), 0, root, random.Random(0), ["buy", "pass"])
    assert {c: child.total for c, child in root.children.items()} == {"buy": 2.0, "pass": 0.0}


def test_mcts_plays_the_other_seats_by_the_policy_it_is_given():
    """``policy`` random: the other seat of the toy answers wait and poke, greedy only poke; seeker in a game
    without a ``bot`` hook: greedy's policy."""
    from services.bots.strategies import MctsStrategy

    game = _Invest()
    seen = {name: {MctsStrategy(budget=None, policy=name, epsilon=0.0)._policy(game, (2, 5, True), 1,
                                                                           random.Random(k)) for k in range(20)}
            for name in ("greedy", "random", "seeker")}
    assert seen == {"greedy": {"poke"}, "random": {"wait", "poke"}, "seeker": {"poke"}}


def test_mcts_with_the_seeker_policy_plays_karawanes_bot_for_the_other_seats_and_first_at_its_root():
    from services.bots.strategies import MctsStrategy
    from tests.bots.knowledge import positions

    class Spy:
        def __init__(self, game):
            self.game, self.title, self.calls = game, game.title, []

        def __getattr__(self, attr):
            return getattr(self.game, attr)

        def bot(self, world, mover, legal, rng):
            self.calls.append(mover)
            return self.game.bot(world, mover, legal, rng)

    for game, state, seat, _ in positions("karawane", count=3):
        spy = Spy(game)
        MctsStrategy(budget=None, iterations=6, rollout=6, policy="seeker").choose(spy, state, seat, random.Random(0))
        assert spy.calls and spy.calls[0] == seat  # the root's first command is the seeker's own
        assert len(spy.calls) > 1



class _Moves(NamedTuple):
    seats: int = 2
    moves: tuple = ()


class _Trap:
    """Two seats, one decision each: seat 0 plays ``trap`` or ``safe``, seat 1 answers with one of four replies.
    After ``trap`` seat 0 wins unless seat 1 answers ``r3``; after ``safe`` the game is a tie whatever the answer.
    Against random answers ``trap`` is better (3 in 4 won), against the best answer ``safe`` (a tie, not a loss).
    ``evaluate`` (before the end) says seat 0 leads once it played ``trap``."""

    title = "Trap"

    def legal_commands(self, state, seat):
        return ["trap", "safe"] if not state.moves else ["r0", "r1", "r2", "r3"]

    def decide(self, state, seat, command, chance):
        return [command]

    def evolve(self, state, event):
        return state._replace(moves=(*state.moves, event))

    def flow(self, state):
        from contracts.table import Flow

        return Flow("play", ((0,), (1,), ())[len(state.moves)])

    def result(self, state):
        from contracts.table import Result

        if len(state.moves) < 2:
            return None
        first, answer = state.moves
        winners = (0, 1) if first == "safe" else (1,) if answer == "r3" else (0,)
        return Result(scores=tuple(int(s in winners) for s in (0, 1)), winners=winners)

    def evaluate(self, state, seat):
        lead = 1.0 if state.moves == ("trap",) else 0.0
        return lead if seat == 0 else -lead

    def determinize(self, state, seat, rng):
        return state


def test_mcts_search_all_answers_by_the_other_seats_best_reply_in_its_tree():
    """``search`` all keeps seat 1's decisions in the tree, each valued by seat 1's own wins: it learns the reply
    that beats ``trap`` and plays ``safe``; the seat's own tree with random answers plays ``trap``."""
    game = _Trap()
    every = strategy("mcts", budget=None, iterations=300, rollout=2, width=None, search="all")
    assert [every.choose(game, _Moves(), 0, random.Random(k)) for k in range(4)] == ["safe"] * 4
    own = strategy("mcts", budget=None, iterations=300, rollout=0, width=None, policy="random")
    assert [own.choose(game, _Moves(), 0, random.Random(k)) for k in range(4)] == ["trap"] * 4


def test_mcts_search_all_rewards_a_cut_by_who_leads_and_an_end_by_its_winners():
    from services.bots.strategies import rewards

    game = _Trap()
    assert rewards(game, _Moves(moves=("trap",)), 2) == [1.0, 0.0]  # not over: seat 0 leads by evaluate
    assert rewards(game, _Moves(moves=("safe",)), 2) == [0.5, 0.5]  # level: shared
    assert rewards(game, _Moves(moves=("trap", "r3")), 2) == [0.0, 1.0]  # over: the winner's
    assert rewards(game, _Moves(moves=("safe", "r3")), 2) == [0.5, 0.5]  # over: the winners share
