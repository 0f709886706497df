"""Yspahan (Sébastien Pauchon, Ystari 2006) for 2 to 4 players, as a pure decider.

``GAME`` satisfies ``domain.kernel.Game``; ``domain.games`` registers it. Data tables live in ``data``
(derived indices in ``board``), rules in ``rules`` (with ``shops``, ``supervisor``, ``scoring``), views in
``views``.
"""

from __future__ import annotations

from contracts.yspahan import COMMANDS, EVENTS, VIEWS, Options
from domain.yspahan import rules, views


class Yspahan:
    name = "yspahan"
    title = "Yspahan"
    min_seats = 2
    max_seats = 4
    options_type = Options
    command_types = COMMANDS
    event_types = EVENTS
    view_types = VIEWS

    setup = staticmethod(rules.setup)
    initial_state = staticmethod(rules.initial_state)
    evolve = staticmethod(rules.evolve)
    decide = staticmethod(rules.decide)
    flow = staticmethod(rules.flow)
    legal_commands = staticmethod(rules.legal_commands)
    result = staticmethod(rules.result)
    check_options = staticmethod(rules.check_options)
    view = staticmethod(views.view)
    redact = staticmethod(views.redact)
    views = staticmethod(views.views)  # last: the name shadows the module in this class body


GAME = Yspahan()

__all__ = ["GAME", "Yspahan"]
