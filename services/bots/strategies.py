"""The strategies (``random``, ``greedy``, ``mcts``, ``seeker``), generic over ``domain.kernel.Game``.

Each is an object with ``choose(game, state, seat, rng) -> command``; ``strategy(name, **settings)`` makes one by
name (``unknown_strategy`` otherwise). See the package's docstring for what each reads of the state.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from domain.chance import Chance
from domain.kernel import RuleViolation


class StrategyError(ValueError):
    """A strategy that cannot be made or used: ``code`` is stable (``unknown_strategy``, ``bad_setting``,
    ``no_hook``), ``message`` for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Strategy(Protocol):
    name: str

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any: ...


# --- helpers over the kernel ----------------------------------------------------------------------------

def chance(rng: random.Random) -> Chance:
    """A chance source for one decision, drawn from the bot's own ``rng`` (not the game's secret seed)."""
    return Chance(rng.randbytes(16), 0)


def advance(game: Any, state: Any, seat: int, command: Any, source: Chance) -> Any:
    """``state`` once ``seat``'s ``command`` is decided and its events folded."""
    for event in game.decide(state, seat, command, source):
        state = game.evolve(state, event)
    return state


def hook(game: Any, name: str) -> Callable[..., Any]:
    found = getattr(game, name, None)
    if found is None:
        raise StrategyError("no_hook", f"{game.title} has no {name!r} hook: this strategy cannot play it")
    return found


def determinize(game: Any, state: Any, seat: int, rng: random.Random) -> Any:
    """A state the seat cannot tell from the true one: everything it has not seen drawn again (the game's hook)."""
    return hook(game, "determinize")(state, seat, rng)


def actor(game: Any, state: Any, rng: random.Random) -> int | None:
    """The seat that acts next in a simulation (one of the awaited, at random when several are), None at the end."""
    if game.result(state) is not None:
        return None
    awaiting = game.flow(state).awaiting
    if not awaiting:
        return None
    return awaiting[0] if len(awaiting) == 1 else rng.choice(awaiting)


# --- random -----------------------------------------------------------------------------------------------

class RandomStrategy:
    name = "random"

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any:
        return rng.choice(list(game.legal_commands(state, seat)))


# --- seeker: the game's own bot hook -----------------------------------------------------------------------

class SeekerStrategy:
    """The game's ``bot`` hook (1001 Karawane's artifact seeker reads only its seat's knowledge); random for a game
    without one (``domain.kernel.bot_command``)."""

    name = "seeker"

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any:
        legal = game.legal_commands(state, seat)
        bot = getattr(game, "bot", None)
        return bot(state, seat, legal, rng) if bot is not None else rng.choice(list(legal))


def settle(game: Any, world: Any, seat: int, command: Any, rng: random.Random) -> Any:
    """``world`` after ``seat``'s ``command`` and the choices of the seats awaited together with it (a simultaneous
    decision: cards chosen face down, answers to a played card), at random, so that its effect shows: a choice of
    its own alone changes nothing until the others' are in."""
    together = set(game.flow(world).awaiting) - {seat}
    world = advance(game, world, seat, command, chance(rng))
    while together and game.result(world) is None:
        pending = [s for s in game.flow(world).awaiting if s in together]
        if not pending:
            break
        other = pending[0]
        world = advance(game, world, other, rng.choice(list(game.legal_commands(world, other))), chance(rng))
    return world


# --- greedy -----------------------------------------------------------------------------------------------

class GreedyStrategy:
    """One step ahead: every legal command on ``samples`` determinizations (the same chance for every command of
    a determinization), the seats awaited with it answering at random (``settle``), rated by the game's
    ``evaluate(state, seat)``; the best mean wins, ties at random."""

    name = "greedy"

    def __init__(self, samples: int = 3) -> None:
        if samples < 1:
            raise StrategyError("bad_setting", f"greedy needs at least 1 sample, not {samples}")
        self.samples = samples

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any:
        legal = list(game.legal_commands(state, seat))
        if len(legal) == 1:
            return legal[0]
        values = rate(game, state, seat, legal, self.samples, rng)
        top = max(values)
        return rng.choice([c for c, v in zip(legal, values) if v == top])


def rate(game: Any, state: Any, seat: int, legal: list[Any], samples: int, rng: random.Random,
         evaluate: Callable[[Any, int], float] | None = None) -> list[float]:
    """Each legal command's mean ``evaluate`` (the game's hook unless another is given: mcts's root rates by
    ``outlook``) over ``samples`` determinizations (the same chance for every command of one), once the seats
    awaited with it answered (``settle``); -inf for one refused in every world."""
    evaluate = evaluate or hook(game, "evaluate")
    worlds = [(determinize(game, state, seat, rng), rng.randbytes(16)) for _ in range(samples)]
    values = []
    for command in legal:
        total, n = 0.0, 0
        for world, seed in worlds:
            try:
                after = settle(game, world, seat, command, random.Random(seed))
            except RuleViolation:  # refused in this world: it tells nothing about the command
                continue
            total += evaluate(after, seat)
            n += 1
        values.append(total / n if n else -math.inf)
    return values


POLICIES = ("greedy", "random", "seeker")  # mcts's policy for the other seats and the rollouts
SEARCHES = ("own", "all")  # whose decisions mcts's tree keeps: the seat's own (graded values) or every seat's (won or lost)
EXPANSIONS = ("random", "greedy")  # which untried command of the seat a node below mcts's root adds first


# --- mcts -------------------------------------------------------------------------------------------------

def policy(game: Any, world: Any, mover: int, rng: random.Random, epsilon: float = 0.0,
           sample: int | None = None) -> Any:
    """A cheap greedy move for ``mover`` inside a simulation (the world is already a determinization: nothing is
    drawn again): each legal command once (at most ``sample`` of them, drawn at random; None: all), with the
    same chance, the seats awaited with it answering at random (``settle``) when the decision is simultaneous,
    rated by ``evaluate``; the best, ties at random. With probability ``epsilon`` a random command instead
    (greedy's own noise: it rates on a few draws); ``epsilon`` 1 is a random policy."""
    legal = game.legal_commands(world, mover)
    if len(legal) == 1:
        return legal[0]
    if epsilon and (epsilon >= 1.0 or rng.random() < epsilon):
        return rng.choice(list(legal))
    if sample is not None and len(legal) > sample:
        legal = rng.sample(list(legal), sample)
    return best(game, world, mover, legal, rng, game.evaluate)


def best(game: Any, world: Any, mover: int, legal: Any, rng: random.Random,
         evaluate: Callable[[Any, int], float]) -> Any:
    """The command of ``legal`` whose outcome ``evaluate`` values best for ``mover`` (each tried once with the same
    chance, the seats awaited with it answering at random when the decision is simultaneous: ``settle``), ties at
    random; one at random when every one is refused."""
    together = len(game.flow(world).awaiting) > 1
    seed = rng.randbytes(16)
    found: list[Any] = []
    top = -math.inf
    for command in legal:
        try:
            if together:
                after = settle(game, world, mover, command, random.Random(seed))
            else:
                after = advance(game, world, mover, command, Chance(seed, 0))
        except RuleViolation:
            continue
        value = evaluate(after, mover)
        if value > top:
            top, found = value, [command]
        elif value == top:
            found.append(command)
    return rng.choice(found) if found else rng.choice(list(legal))


class _Node:
    __slots__ = ("children", "visits", "total", "avail", "actor")

    def __init__(self, actor: int | None = None) -> None:
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.total = 0.0  # the sum of the seat's values backed up through this node (``all``: its actor's rewards)
        self.avail = 0
        self.actor = actor  # ``search`` all: the seat that chose the command leading here


def rewards(game: Any, world: Any, seats: int) -> list[float]:
    """Each seat's reward at the end of a simulation of ``search`` all: the winners share 1; when the game is not
    over (the rollout was cut), the seats the game's ``evaluate`` rates best share it (won or lost at the cut)."""
    result = game.result(world)
    if result is not None:
        winners = list(result.winners)
    else:
        values = [game.evaluate(world, s) for s in range(seats)]
        top = max(values)
        winners = [s for s, v in enumerate(values) if v == top]
    out = [0.0] * seats
    for s in winners:
        out[s] = 1.0 / len(winners)
    return out


def forecast(game: Any) -> Callable[[Any, int], float]:
    """The game's ``outlook`` hook (the seat's score to be, as a margin over the best other seat), else its
    ``evaluate``."""
    return getattr(game, "outlook", None) or game.evaluate


def value(game: Any, world: Any, seat: int) -> float:
    """The seat's value at the end of a simulation: ``outlook`` (``forecast``: its margin over the best other
    seat), and at the game's end a bonus of one point for a win (shared by the winners) so that a won game beats a
    lost one of the same margin."""
    result = game.result(world)
    margin = forecast(game)(world, seat)
    if result is not None and seat in result.winners:
        margin += 1.0 / len(result.winners)
    return margin


class MctsStrategy:
    """Information-set MCTS over determinizations, with the tree kept to the seat's own decisions: per iteration
    a new determinization of what ``seat`` has not seen; the seat's decisions are chosen in the tree (UCB1 over
    the commands legal in this world, availability counts, each child's mean value placed between its worst and
    best sibling's), every other seat's by ``policy`` (greedy on ``evaluate`` over at most ``sample`` commands,
    at random with probability ``epsilon``), at a simultaneous decision all of them at once before any acted
    (``_plan``): no other seat's choice depends on the seat's hidden one (Samarkand's cards face down and stops,
    Istanbul's answers), as at the true table. The tree grows by one node an iteration; then ``rollout`` more
    commands by ``policy`` for everyone (0: none), and the seat's ``value`` where the simulation stopped (its
    margin by the game's ``outlook``, the score to be, else by ``evaluate``: graded, not won or lost at the cut).
    At the root, when the seat has more than ``width`` commands (None: no limit), only the ``width`` best by
    greedy's rating (``rate``, one determinization, by ``outlook``) are searched, the best first; below it, a node
    adds an untried command at random or (``expand`` greedy) the best rated first (``_expansion``). Stops after
    ``budget`` seconds (None: no clock) or ``iterations``, whichever comes first; plays the root's most visited
    command (a tie: the better valued, then the better rated). ``search`` all: the plain single-observer ISMCTS
    instead (``_choose_all``, ``_iterate_all``: every seat's decisions in the tree, won or lost)."""

    name = "mcts"

    def __init__(self, budget: float | None = 1.0, iterations: int = 100_000, rollout: int = 0,
                 exploration: float = 0.7, width: int | None = 6, epsilon: float = 0.1,
                 sample: int | None = 8, policy: str = "greedy", expand: str = "random", search: str = "own",
                 clock: Callable[[], float] = time.perf_counter) -> None:
        if budget is not None and budget <= 0:
            raise StrategyError("bad_setting", f"the budget is a positive number of seconds, not {budget}")
        if iterations < 1 or rollout < 0:
            raise StrategyError("bad_setting", "mcts needs at least 1 iteration and a rollout of 0 or more commands")
        if width is not None and width < 1:
            raise StrategyError("bad_setting", f"mcts's width is at least 1 command (or None: all), not {width}")
        if not 0.0 <= epsilon <= 1.0:
            raise StrategyError("bad_setting", f"mcts's epsilon is a probability, not {epsilon}")
        self.budget, self.iterations, self.rollout, self.exploration = budget, iterations, rollout, exploration
        if policy not in POLICIES:
            raise StrategyError("bad_setting", f"mcts's policy is one of {', '.join(POLICIES)}, not {policy!r}")
        self.width, self.epsilon, self.sample, self.policy = width, epsilon, sample, policy
        if expand not in EXPANSIONS:
            raise StrategyError("bad_setting", f"mcts's expand is one of {', '.join(EXPANSIONS)}, not {expand!r}")
        self.expand = expand
        if search not in SEARCHES:
            raise StrategyError("bad_setting", f"mcts's search is one of {', '.join(SEARCHES)}, not {search!r}")
        self.search = search
        self.clock = clock
        self.last_iterations = 0  # how many the last choice ran (benchmarks report it)

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any:
        legal = list(game.legal_commands(state, seat))
        if len(legal) == 1:
            return legal[0]
        hook(game, "evaluate")
        deadline = None if self.budget is None else self.clock() + self.budget
        if self.search == "all":
            return self._choose_all(game, state, seat, legal, rng, deadline)
        prior = (rate(game, state, seat, legal, 1, rng, forecast(game))
                 if self.width is not None and len(legal) > self.width else None)
        if prior is not None:  # the root searches the greedy rating's best ``width`` commands, best first
            order = sorted(range(len(legal)), key=lambda i: -prior[i])[: self.width]
            legal = [legal[i] for i in order]
        if self.policy == "seeker" and getattr(game, "bot", None) is not None:  # the game's own bot's choice first
            own = game.bot(state, seat, game.legal_commands(state, seat), rng)
            legal = [own, *(c for c in legal if c != own)][: max(len(legal), 1) if prior is None else self.width]
        root = _Node()
        done = 0
        while done < self.iterations and (deadline is None or self.clock() < deadline):
            self._iterate(game, determinize(game, state, seat, rng), seat, root, rng, legal)
            done += 1
        self.last_iterations = done
        visited = [(root.children[c].visits, root.children[c].total / root.children[c].visits, -i)
                   for i, c in enumerate(legal) if c in root.children and root.children[c].visits]
        if not visited:
            return legal[0] if prior is not None else rng.choice(legal)
        return legal[-max(visited)[2]]

    def _choose_all(self, game: Any, state: Any, seat: int, legal: list[Any], rng: random.Random,
                    deadline: float | None) -> Any:
        """``search`` all: the root's ``width`` best commands by greedy's rating (``rate`` on ``evaluate``, one
        determinization), the best first; ``_iterate_all`` until the budget or ``iterations``; the most visited
        (a tie: the better rated)."""
        prior = rate(game, state, seat, legal, 1, rng) if self.width is not None and len(legal) > self.width else None
        if prior is not None:
            order = sorted(range(len(legal)), key=lambda i: -prior[i])[: self.width]
            legal = [legal[i] for i in order]
        root = _Node()
        done = 0
        while done < self.iterations and (deadline is None or self.clock() < deadline):
            self._iterate_all(game, determinize(game, state, seat, rng), seat, state.seats, root, rng, legal)
            done += 1
        self.last_iterations = done
        visited = [(root.children[c].visits, -i) for i, c in enumerate(legal) if c in root.children]
        if not visited:
            return legal[0] if prior is not None else rng.choice(legal)
        return legal[-max(visited)[1]]

    def _iterate_all(self, game: Any, world: Any, seat: int, seats: int, root: _Node, rng: random.Random,
                     choices: list[Any]) -> None:
        """One iteration of ``search`` all (single-observer ISMCTS): every seat's decisions in the tree (UCB1 on
        each node's chooser's win rate over the commands legal in this world, availability counts), one node
        added, then ``rollout`` random commands, each seat's reward won or lost (``rewards``) backed up to the
        nodes it chose."""
        node, path = root, [root]
        mover: int | None = seat  # the root decides for ``seat``, whoever else is awaited in this world
        while mover is not None:
            legal = choices if node is root else game.legal_commands(world, mover)
            if not legal:
                break
            untried = [c for c in legal if c not in node.children]
            if untried:
                command = untried[0] if node is root else rng.choice(untried)  # the root's: best rated first
                child = node.children[command] = _Node(mover)
                world = advance(game, world, mover, command, chance(rng))
                path.append(child)
                break
            chosen, top = None, -math.inf
            for c in legal:
                node.children[c].avail += 1
            for c in legal:
                child = node.children[c]
                score = child.total / child.visits + self.exploration * math.sqrt(math.log(child.avail) / child.visits)
                if score > top:
                    chosen, top = c, score
            node = node.children[chosen]
            world = advance(game, world, mover, chosen, chance(rng))
            path.append(node)
            mover = actor(game, world, rng)
        for _ in range(self.rollout):
            mover = actor(game, world, rng)
            if mover is None:
                break
            world = advance(game, world, mover, rng.choice(list(game.legal_commands(world, mover))), chance(rng))
        reward = rewards(game, world, seats)
        for n in path:
            n.visits += 1
            if n.actor is not None:
                n.total += reward[n.actor]

    def _expansion(self, game: Any, world: Any, seat: int, untried: list[Any], rng: random.Random) -> Any:
        """The untried command a node below the root adds: at random, or (``expand`` greedy) the best by the
        game's ``outlook`` of at most ``sample`` of them (``best``): the seat's good answers first, so that a command
        that prepares one (Istanbul's location card, then the action there) is valued by it, not by a random one."""
        if self.expand == "random" or len(untried) == 1:
            return rng.choice(untried)
        if self.sample is not None and len(untried) > self.sample:
            untried = rng.sample(untried, self.sample)
        return best(game, world, seat, untried, rng, forecast(game))

    def _select(self, node: _Node, legal: Any) -> Any:
        """UCB1 over ``legal`` (every one a child already), the children's mean values placed between the lowest
        (0) and the highest (1) of them: the margins of ``evaluate`` have the game's own scale, and what UCB1
        weighs is which child is better."""
        children = [node.children[c] for c in legal]
        means = [child.total / child.visits for child in children]
        low = min(means)
        spread = (max(means) - low) or 1.0
        best, best_score = None, -math.inf
        for command, child, mean in zip(legal, children, means):
            child.avail += 1
            score = (mean - low) / spread + self.exploration * math.sqrt(math.log(child.avail) / child.visits)
            if score > best_score:
                best, best_score = command, score
        return best

    def _plan(self, game: Any, world: Any, seat: int, pending: dict[int, Any], rng: random.Random) -> None:
        """At a simultaneous decision, every other awaited seat's command chosen by ``policy`` at once, on the world
        before any of them acted (``pending``, seat to command), as the true seats choose: none of those choices
        depends on another's hidden one (the seat's card face down, its answer), whichever acts first in the
        simulation. A seat no longer awaited loses its planned command."""
        awaiting = game.flow(world).awaiting
        for other in [o for o in pending if o not in awaiting]:
            del pending[other]
        if len(awaiting) > 1:
            for other in awaiting:
                if other != seat and other not in pending:
                    pending[other] = self._policy(game, world, other, rng)

    def _other(self, game: Any, world: Any, mover: int, pending: dict[int, Any], rng: random.Random) -> Any:
        """``world`` after another seat's command: the planned one (``_plan``), else by ``policy``."""
        planned = pending.pop(mover, None)
        if planned is not None:
            try:
                return advance(game, world, mover, planned, chance(rng))
            except RuleViolation:  # no longer legal in this world: chosen again below
                pass
        return advance(game, world, mover, self._policy(game, world, mover, rng), chance(rng))

    def _policy(self, game: Any, world: Any, mover: int, rng: random.Random) -> Any:
        """The other seats' (and the rollouts') command: ``policy`` (greedy on ``evaluate``), at random, or the
        game's own ``bot`` hook (``seeker``: 1001 Karawane's artifact seeker; greedy for a game without one)."""
        if self.policy == "seeker" and getattr(game, "bot", None) is not None:
            legal = game.legal_commands(world, mover)
            return legal[0] if len(legal) == 1 else game.bot(world, mover, legal, rng)
        if self.policy == "random":
            return rng.choice(list(game.legal_commands(world, mover)))
        return policy(game, world, mover, rng, self.epsilon, self.sample)

    def _iterate(self, game: Any, world: Any, seat: int, root: _Node, rng: random.Random,
                 choices: list[Any]) -> None:
        node, path = root, [root]
        pending: dict[int, Any] = {}
        mover: int | None = seat  # the root decides for ``seat``, whoever else is awaited in this world
        expanded = False
        group: set[int] = set()  # the others awaited together with the seat's newly added command
        while mover is not None and not (mover == seat and expanded):
            if expanded and group and not group & pending.keys():
                break  # they all answered: the new command valued where greedy values it, before what follows
            self._plan(game, world, seat, pending, rng)
            if mover != seat:
                world = self._other(game, world, mover, pending, rng)
            else:
                legal = choices if node is root else game.legal_commands(world, seat)
                untried = [c for c in legal if c not in node.children]
                if untried:
                    command = untried[0] if node is root else self._expansion(game, world, seat, untried, rng)
                    node.children[command] = _Node()
                    expanded = True
                    group = set(pending)
                else:
                    command = self._select(node, legal)
                node = node.children[command]
                path.append(node)
                world = advance(game, world, seat, command, chance(rng))
            mover = actor(game, world, rng)
        for _ in range(self.rollout):
            mover = actor(game, world, rng)
            if mover is None:
                break
            self._plan(game, world, -1, pending, rng)
            world = self._other(game, world, mover, pending, rng)
        reward = value(game, world, seat)
        for n in path:
            n.visits += 1
            n.total += reward


# --- by name ----------------------------------------------------------------------------------------------

STRATEGIES: dict[str, Callable[..., Strategy]] = {
    "random": RandomStrategy,
    "greedy": GreedyStrategy,
    "mcts": MctsStrategy,
    "seeker": SeekerStrategy,
}


def strategy(name: str, **settings: Any) -> Strategy:
    """The strategy called ``name`` with its ``settings`` (``mcts``: ``budget``, ``iterations``, ``rollout``,
    ``width``, ``exploration``, ``epsilon``, ``sample``, ``policy``, ``expand``; ``greedy``: ``samples``)."""
    make = STRATEGIES.get(name)
    if make is None:
        raise StrategyError("unknown_strategy", f"the strategies are {', '.join(STRATEGIES)}, not {name!r}")
    try:
        return make(**settings)
    except TypeError as exc:
        raise StrategyError("bad_setting", f"{name}: {exc}") from None


