"""Bots: strategies that play a seat of any game through the kernel (issue #19, section 4).

A strategy is ``choose(game, state, seat, rng) -> command``: one of ``game.legal_commands(state, seat)``. It is
handed the true state (the server holds nothing else) but reads it only through what the seat may know:

- ``random``: a legal command at random;
- ``greedy``: each legal command tried on a few *determinizations* (the game's ``determinize(state, seat, rng)``
  hook: everything the seat has not seen drawn again) and the one whose outcome the game's ``evaluate(state,
  seat)`` hook rates best;
- ``mcts``: information-set Monte Carlo tree search over determinizations (Cowling, Powley & Whitehouse 2012)
  whose tree holds the seat's own decisions only: every iteration plays in a new determinization, the other
  seats choose by a cheap greedy policy outside the tree (at a simultaneous decision, all at once before any of
  them acted: none answers the seat's hidden choice), the value is the seat's margin where the simulation stops
  by the game's ``outlook`` hook (its score to be: Samarkand's) or else ``evaluate`` (graded, not won or lost);
  a time budget per move and an iteration cap (a test with a seeded ``rng`` and no budget is deterministic);
  ``policy`` ``random`` or ``seeker`` (the game's own ``bot`` hook, tried first at the root) instead of the
  greedy policy for the other seats and the rollouts; ``expand`` ``greedy``: a node below the root adds the
  seat's best rated untried command first instead of a random one; ``search`` ``all``: the plain single-observer
  ISMCTS instead (every seat's decisions in the tree, each node valued by the wins of the seat that chose it,
  random commands after the tree, won or lost at the cut by who leads by ``evaluate``: Istanbul's);
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
