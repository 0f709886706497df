"""Base classes every contract type derives from.

- ``Command``: inbound, strict (unknown fields are rejected at the door).
- ``Event``: stored forever, evolvable (unknown fields are ignored so old readers survive new writers).
- ``View``: read models served to clients.
All are frozen and tagged through the ``type`` field; each subclass gives its own explicit ``tag=``.
"""

from __future__ import annotations

import msgspec


class Command(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Event(msgspec.Struct, frozen=True, tag_field="type"):
    pass


class View(msgspec.Struct, frozen=True, tag_field="type"):
    pass
