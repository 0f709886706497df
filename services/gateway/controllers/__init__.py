"""The gateway's routes, one Litestar controller per resource:

- ``platform``: ``/health``, ``/catalog``, ``/metrics``, ``/asyncapi.json``;
- ``games``: the lobby (``/games``: list, create, one game, cancel);
- ``seats``: a game's seats (``/games/{game_id}/seats``: join, leave, rematch) and what a seat does with its token
  (view, legal commands, history, commands);
- ``spectator``: what anyone may read of a game (view, history, audit);
- ``sockets``: the WebSockets that push views.

What they use (stores, listeners, token checks, limits, settings) is injected: ``services.gateway.dependencies``.
"""

from services.gateway.controllers.games import GamesController
from services.gateway.controllers.platform import PlatformController
from services.gateway.controllers.seats import SeatsController
from services.gateway.controllers.sockets import SocketsController
from services.gateway.controllers.spectator import SpectatorController

CONTROLLERS = [PlatformController, GamesController, SeatsController, SpectatorController, SocketsController]

__all__ = ["CONTROLLERS", "GamesController", "PlatformController", "SeatsController", "SocketsController",
           "SpectatorController"]
