"""The views a projection pushes: the message on ``souk:pushes:{game}`` (``keys.view_pushes``), internal to Souk.

The projector's write script publishes it, just before the game's ``ViewsUpdated`` notice, with the views it has
just stored (``souk:views:{game}``): the gateway pushes them to its sockets from here instead of reading them back.
It is no wire contract (no msgspec struct, not in ``souk schema``): only Souk's own gateway reads it, and its form
is what makes it cheap on both sides. The script builds it by joining the header the projector sent and the views
*it stores* (no second copy of them goes to Redis), and the gateway slices a view out of it without parsing the
rest (a JSON object of five Samarkand views took 10-13 µs to decode, as much as the read it replaces):

    <version> <audience>=<length> <audience>=<length> ...\\n<view><view>...

``version``: the game's version after the projection (every view's ``version``); then each audience ("0", "1",
..., "spectator") and the length in bytes of its view (``TableView`` JSON, as stored), in the order the views
follow the line. Every seat's secrets are in it: the channel is the read store's, like the views' hash.
"""

from __future__ import annotations

from collections.abc import Iterable


def header(version: int, views: Iterable[tuple[str, bytes]]) -> str:
    """The message's first line, newline included, for these (audience, view) pairs in their order."""
    return " ".join((str(version), *(f"{audience}={len(view)}" for audience, view in views))) + "\n"


def message(version: int, views: dict[str, bytes]) -> bytes:
    """The whole message (what the projector's script publishes), built here: for tests and tools."""
    return header(version, views.items()).encode() + b"".join(views.values())


def read(data: bytes) -> tuple[int, dict[str, tuple[int, int]]]:
    """The version and where each audience's view is in ``data`` (start, end): sliced only for those wanted.
    Raises ValueError on a message of another form."""
    end = data.index(b"\n")
    version, *items = data[:end].split(b" ")
    at, where = end + 1, {}
    for item in items:
        audience, _, length = item.partition(b"=")
        start, at = at, at + int(length)
        where[audience.decode()] = (start, at)
    if at != len(data):
        raise ValueError(f"a views push of {len(data)} bytes says {at}")
    return int(version), where
