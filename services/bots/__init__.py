"""Bots: strategies that play a seat of any game through the kernel (issue #19, section 4).

A strategy is ``choose(game, state, seat, rng) -> command``: one of ``game.legal_commands(state, seat)``. It is
handed the true state (the server holds nothing else) but reads it only through what the seat may know:

- ``random``: a legal command at random;
- ``greedy``: each legal command tried on a few *determinizations* (the game's ``determinize(state, seat, rng)``
  hook: everything the seat has not seen drawn again) and the one whose outcome the game's ``evaluate(state,
  seat)`` hook rates best;
- ``mcts``: single-observer information-set Monte Carlo tree search (Cowling, Powley & Whitehouse 2012): every
  iteration plays in a new determinization, the tree is keyed by commands, a node's availability counts its
  choices' UCB; rollouts at random, cut at a depth and rated by ``evaluate`` when the game is not over; a time
  budget per move and an iteration cap (a test with a seeded ``rng`` and no budget is deterministic);
- ``seeker``: the game's own ``bot`` hook (1001 Karawane's artifact seeker, ``domain.karawane.bot``), random
  for a game without one.

A bot at a table on a server (``souk bot``) has no true state: ``services.client.remote_bot`` builds one from its seat's
view alone with the game's ``from_view`` hook (what the view hides drawn at random) and plays through the SDK.

Chance inside ``decide`` (dice, draws) comes from the caller's ``rng`` (``chance``), never from the game's seed:
a bot does not know the future either. The domain stays pure: the hooks take the caller's ``random.Random``;
only this package reads the clock (mcts's budget).
"""

from services.bots.strategies import STRATEGIES, Strategy, strategy

__all__ = ["STRATEGIES", "Strategy", "strategy"]
