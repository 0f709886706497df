"""The views a projection pushes to the gateways: internal to Souk, no wire contract.

The projector's write script publishes each audience's view it has just stored (``souk:views:{game}``) on its own
channel, ``souk:pushes:{game}:{version}:{audience}``, the message being the view's bytes (``TableView`` JSON, as
stored), just before the game's ``ViewsUpdated`` notice. The gateway pushes them to its sockets from there instead
of reading them back (``services.gateway.listeners``).

Why this form, and not the views inside ``ViewsUpdated`` (measured, docs/performance-changes.md section 5): in the
script, each view is the very Lua string its ``HSET`` takes, published as it is; any message built from them (one
JSON object, or a header and the views joined) is a new Lua string of every view's bytes, which cost the read store
about 25 µs a Samarkand command, and a JSON object of five views cost the gateway 10-13 µs to decode. Here the
channel names the game, the version and the audience, so the gateway takes a view without parsing it. It is no
contract (not in ``souk schema``): only Souk's own gateway reads it, and every seat's secrets are in it (the read
store's channels are as private as its keys).
"""

from __future__ import annotations

from services.store import keys


def prefix(game_id: str, version: int) -> str:
    """The channels of a game's views at ``version``, but for the audience that ends each."""
    return f"{keys.view_pushes(game_id)}:{version}:"


def channel(game_id: str, version: int, audience: str) -> str:
    return prefix(game_id, version) + audience


_START = len(keys.view_pushes(""))


def read(name: bytes) -> tuple[str, int, str]:
    """The game, the version and the audience a channel is for. Raises ValueError on another name."""
    game, version, audience = name[_START:].rsplit(b":", 2)
    return game.decode(), int(version), audience.decode()
