"""The protocol every game implements, the rule-violation error, and the registry of games by name.

A game is a *decider* (Chassaing): ``setup`` gives the first events, ``decide`` turns a seat's command into
events or raises ``RuleViolation``, ``evolve`` folds one event into the state. ``flow`` says whose decision is
awaited, ``legal_commands`` lists exactly what ``decide`` accepts from a seat now, ``view`` shows a seat (or a
spectator, ``None``) what it may see (``views``: all of them at once), ``redact`` does the same for one event
of the history, ``result`` is ``None`` until the game is over.

One optional hook: ``is_barrier(event) -> bool`` says which of the game's events no undo may cross (a chance
outcome: a roll, a shuffle, a card turned or drawn; anything that shows a seat something it did not know: a
reveal, a card drawn into a hand, a card shown). A game without it gets the conservative default
(``is_barrier``): every one of its events is a barrier, so none of its moves can be undone. The kernel cannot
tell by itself which events carry a chance outcome: ``evolve`` never draws, the outcomes are written into the
events as plain data.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, ClassVar, Protocol

import msgspec

from contracts.table import Flow, Result
from domain.chance import Chance


class RuleViolation(Exception):
    """A command the rules refuse. ``code`` is stable (clients switch on it); ``message`` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Game(Protocol):
    name: str  # registry key, also the tag prefix of the game's contracts ("samarkand")
    title: str
    min_seats: int
    max_seats: int
    options_type: type[msgspec.Struct]  # the game's options; every field has a default
    command_types: tuple[type, ...]  # tagged Structs a seat may send
    event_types: tuple[type, ...]  # tagged Structs the game stores
    view_types: tuple[type, ...]  # tagged Structs its views are made of (for the JSON Schema)

    def setup(self, seats: int, options: Any, chance: Chance) -> Sequence[Any]:
        """The game's first events (the deal, shuffles, first player), all chance written in."""

    def initial_state(self, seats: int, options: Any) -> Any:
        """The state before the first event of ``setup``."""

    def evolve(self, state: Any, event: Any) -> Any: ...

    def decide(self, state: Any, seat: int, command: Any, chance: Chance) -> Sequence[Any]:
        """Events for this seat's command, including the automatic consequences (next round, scoring)."""

    def flow(self, state: Any) -> Flow: ...

    def legal_commands(self, state: Any, seat: int) -> Sequence[Any]: ...

    def view(self, state: Any, seat: int | None) -> Any: ...

    def views(self, state: Any) -> dict[int | None, Any]:
        """Every seat's ``view`` and then the spectator's (key None), at once: what they share is built once
        (the projector writes them all after each command)."""

    def redact(self, event: Any, seat: int | None) -> Any:
        """The event as ``seat`` may see it in the history (secrets replaced), or the event itself.

        A spectator sees no more than any seat: when ``redact(event, None)`` returns the event itself, the
        event hides nothing from anyone (the projector then stores it once for every reader)."""

    def result(self, state: Any) -> Result | None: ...

    # Optional: ``def is_barrier(self, event: Any) -> bool`` (see the module's docstring and ``is_barrier``).
    # Optional: ``def bot(self, state, seat, legal, rng) -> command``: a simple policy that plays the game to its
    # end, for a game that random legal play rarely ends (``bot_command``).
    # Optional, for the table's clocks (issue #19; ``domain.table``), pure: ``def timer(self, state) -> tuple[str,
    # float] | None``: the key of the game's own running timer and its length in seconds (None: none; Samarkand's
    # real-time countdown), and ``def tick(self, state, key, chance) -> events``: that timer ran out. And
    # ``def scores(self, state) -> tuple[int, ...]``: the seats' scores now, public (a game ended by resignations
    # or forfeits reports them; without the hook, zeros).
    # Optional, for the bots (``services.bots``; each game's ``evaluation`` module), pure, reading only what ``seat``
    # may know: ``def evaluate(self, state, seat) -> float`` (higher is better for ``seat``),
    # ``def outlook(self, state, seat) -> float`` (mcts's value where its look ahead stops: the score to be rather
    # than ``evaluate``'s score now; ``evaluate`` without it), and
    # ``def determinize(self, state, seat, rng) -> state``: a state ``seat`` cannot tell from ``state``, everything
    # it has not seen (other hands, deck orders, face-down tiles, a simultaneous choice not revealed yet) drawn
    # again with the caller's ``random.Random``; two states the seat cannot tell apart give the same one.
    # Optional, for a bot that plays remotely (``services.client.remote_bot``): ``def from_view(self, view, seat, seats,
    # options, rng) -> state``: a state consistent with everything ``view`` (``seat``'s own) shows, what it does not
    # show drawn with ``rng`` as ``determinize`` draws it; ``view(from_view(view, ...), seat) == view`` and the seat's
    # legal commands are the same (tests/bots/test_from_view.py).


class ModularGame:
    """A ``Game`` whose rules live in one module and its views in another (``domain/<game>/rules.py`` and
    ``views.py``): every method of the protocol delegates to the function of the same name there. A subclass
    names the modules and its metadata, and adds the optional hooks it has (``is_barrier``); ``check_options``
    delegates only when the rules module has one.
    """

    rules_module: ClassVar[ModuleType]  # setup, initial_state, evolve, decide, flow, legal_commands, result
    views_module: ClassVar[ModuleType]  # view, views, redact

    def check_options(self, seats: int, options: Any) -> None:
        check = getattr(self.rules_module, "check_options", None)
        if check is not None:
            check(seats, options)

    def setup(self, seats: int, options: Any, chance: Chance) -> Sequence[Any]:
        return self.rules_module.setup(seats, options, chance)

    def initial_state(self, seats: int, options: Any) -> Any:
        return self.rules_module.initial_state(seats, options)

    def evolve(self, state: Any, event: Any) -> Any:
        return self.rules_module.evolve(state, event)

    def decide(self, state: Any, seat: int, command: Any, chance: Chance) -> Sequence[Any]:
        return self.rules_module.decide(state, seat, command, chance)

    def flow(self, state: Any) -> Flow:
        return self.rules_module.flow(state)

    def legal_commands(self, state: Any, seat: int) -> Sequence[Any]:
        return self.rules_module.legal_commands(state, seat)

    def result(self, state: Any) -> Result | None:
        return self.rules_module.result(state)

    def view(self, state: Any, seat: int | None) -> Any:
        return self.views_module.view(state, seat)

    def views(self, state: Any) -> dict[int | None, Any]:
        return self.views_module.views(state)

    def redact(self, event: Any, seat: int | None) -> Any:
        return self.views_module.redact(event, seat)


class Evaluated:
    """The bots' optional hooks of a game (``evaluate``, ``determinize``, ``from_view``), delegated to the functions
    of the same name in its ``evaluation_module`` (``domain/<game>/evaluation.py``): a game that has them mixes this
    in beside ``ModularGame``; one without them does not, and the bots see it has none."""

    evaluation_module: ClassVar[ModuleType]

    def evaluate(self, state: Any, seat: int) -> float:
        """How good ``state`` looks to ``seat``, from what ``seat`` may know."""
        return self.evaluation_module.evaluate(state, seat)

    def outlook(self, state: Any, seat: int) -> float:
        """How good ``state`` looks to ``seat`` as a forecast of the game's end (mcts's value where its look ahead
        stops): the module's ``outlook`` when it has one, else ``evaluate``."""
        found = getattr(self.evaluation_module, "outlook", None)
        return found(state, seat) if found is not None else self.evaluation_module.evaluate(state, seat)

    def determinize(self, state: Any, seat: int, rng: Any) -> Any:
        """``state`` with what ``seat`` has not seen drawn again with ``rng``."""
        return self.evaluation_module.determinize(state, seat, rng)

    def from_view(self, view: Any, seat: int, seats: int, options: Any, rng: Any) -> Any:
        """A state consistent with ``seat``'s view, what it does not show drawn with ``rng`` (a remote bot holds
        nothing else)."""
        return self.evaluation_module.from_view(view, seat, seats, options, rng)


def rules_revision(game: Any) -> int | None:
    """The newest revision of a game's rules (its optional ``rules_revision``), None for a game without revisions.
    A game with revisions has a ``rules`` option: the revision a game is played under, fixed at its creation (a
    rules fix would otherwise change what an old game's recorded commands give when they are re-run)."""
    return getattr(game, "rules_revision", None)


def is_barrier(game: Game, event: Any) -> bool:
    """Whether no undo may go back over ``event``: the game's own hook, else True (every event is a barrier)."""
    hook = getattr(game, "is_barrier", None)
    return True if hook is None else bool(hook(event))


_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    if game.name in _GAMES:
        raise ValueError(f"game {game.name!r} registered twice")
    _GAMES[game.name] = game
    return game


def games() -> dict[str, Game]:
    _load_builtin_games()
    return dict(_GAMES)


def get_game(name: str) -> Game | None:
    game = _GAMES.get(name)  # the hot path: folding and projecting call this for every event
    if game is None:
        _load_builtin_games()
        game = _GAMES.get(name)
    return game


def _load_builtin_games() -> None:
    # Imported lazily so that domain.kernel has no import cycle with the games that register themselves.
    import domain.games  # noqa: F401


def bot_command(game: Any, state: Any, seat: int, rng: Any) -> Any:
    """A command for ``seat`` that benchmarks and tests play: the game's own bot (its optional ``bot`` hook, for a
    game that random play rarely ends: 1001 Karawane), else one of its legal commands at random. ``rng`` is the
    caller's ``random.Random``."""
    legal = game.legal_commands(state, seat)
    bot = getattr(game, "bot", None)
    return bot(state, seat, legal, rng) if bot is not None else rng.choice(legal)
