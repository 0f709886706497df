"""Base classes every contract type derives from.

- ``Command``: inbound, strict (unknown fields are rejected at the door).
- ``Event``: stored forever, evolvable (unknown fields are ignored so old readers survive new writers). A field
  added with a default needs nothing more; any other change of shape (a field renamed, a meaning changed) bumps
  the event's ``schema`` (a field the event then gets, whose default is its current version; absent: version 1)
  and registers an upcast step from the previous version (``upcast``), which every decoder of stored events
  applies (``services.store.codec.event_decoder``): events stay readable forever.
- ``View``: read models served to clients.
All are frozen and tagged through the ``type`` field; each subclass gives its own explicit ``tag=``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec


class Command(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Event(msgspec.Struct, frozen=True, tag_field="type"):
    pass


class View(msgspec.Struct, frozen=True, tag_field="type"):
    pass


Upcast = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTS: dict[str, dict[int, Upcast]] = {}  # tag -> version -> the step from that version to the next


def upcast(tag: str, version: int) -> Callable[[Upcast], Upcast]:
    """Registers the step that turns a stored event of type ``tag`` at ``version`` (its ``schema`` field; absent:
    1) into the shape of ``version + 1``: a function of the event's JSON object (as a dict) giving the new one."""

    def register(step: Upcast) -> Upcast:
        steps = UPCASTS.setdefault(tag, {})
        if version in steps:
            raise ValueError(f"{tag} already has an upcast from version {version}")
        steps[version] = step
        return step

    return register


def upcast_event(raw: dict[str, Any]) -> dict[str, Any]:
    """A stored event's JSON object in its type's current shape: every registered step from its version on."""
    steps = UPCASTS.get(raw.get("type", ""))
    if not steps:
        return raw
    version = raw.get("schema", 1)
    while version in steps:
        raw = steps[version](dict(raw))
        version += 1
        raw["schema"] = version
    return raw
