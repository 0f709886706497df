"""A game's snapshots in the read store: the table at a version, compressed, as one member of the sorted set
``souk:snapshots:{game}`` scored by its version. The projector writes them (``snapshot_member``); time travel
(``services.history.travel``) reads them (``snapshot_table``)."""

from __future__ import annotations

import base64
import zlib

from domain import table as tbl


def snapshot_member(table: tbl.Table) -> str:
    """The sorted-set member of the table's snapshot: ``{version}:`` then the table, compressed, in base64."""
    return f"{table.version}:" + base64.b64encode(zlib.compress(tbl.encode_table(table), 6)).decode()


def snapshot_table(member: bytes) -> tbl.Table | None:
    """The table of a snapshot member; None when it does not decode (a cache: the caller folds without it)."""
    try:
        version, _, data = member.partition(b":")
        table = tbl.decode_table(zlib.decompress(base64.b64decode(data)))
    except Exception:  # noqa: BLE001 - whatever is wrong with a cached snapshot, the events are the truth
        return None
    return table if table.exists and table.version == int(version) else None
