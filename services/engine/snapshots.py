"""The engine's snapshots: a game's cold load (not in the engine's cache) starts from its latest snapshot and folds
only the events after it (issue #18: 164 ms at 10,000 events when every load folded from the first event).

Every ``SOUK_ENGINE_SNAPSHOT_EVERY`` events (100; 0: none), once a command's append went through, the engine writes
the slot it holds then (the table, each seat's ``awaited_since``, the chain head) to ``souk:snapshot:{game}`` in
the event store, replacing the one before: one per game in play, dropped when the game ends (and by ``souk
archive``). It is taken at the end of a command, never inside one. The event store, not the read store: the engine
does not depend on the read store (the projector's snapshots, ``services/history/travel.py``, serve time travel).

A snapshot is a cache: whatever is wrong with it, the game is folded from its first event, and is the same. It is
ignored (``load`` answers None) when:

- it was written by other code: ``CODE`` is a digest of the code a fold depends on (``domain/``, ``contracts/``,
  the stored forms' codec and this module): a rules fix, an upcast, a changed struct, a new rules revision all
  change it, and a snapshot of the code before is never read by the code after (nor the other way round, in a
  rolling deploy);
- its bytes are not what was written (its table's sha256 is kept beside it), or do not decode;
- it is not this stream's: the event at its version must have its head hash (a game archived, imported again or
  rewritten under the same id), the entry after it must begin a command, and the stream must reach its version.
"""

from __future__ import annotations

import hashlib
import zlib
from functools import cache
from pathlib import Path

import msgspec
import structlog

from domain import table as tbl

log = structlog.get_logger("souk.engine")
FORMAT = 1  # this record's shape


class Snapshot(msgspec.Struct, frozen=True, array_like=True):
    """A game's slot as the engine held it after the command that ended at ``version``."""

    format: int
    code: str  # CODE of the writer
    version: int
    head: str  # the hash of the event at ``version``
    since: tuple[int, ...]  # each seat's awaited_since
    table: bytes  # zlib of domain.table.encode_table
    digest: bytes  # sha256 of ``table``


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Snapshot).decode

_ROOT = Path(__file__).resolve().parents[2]
_SOURCES = ("domain", "contracts", "services/store/codec.py", "services/engine/snapshots.py")


@cache
def code() -> str:
    """A digest of the code a fold depends on (every .py file of ``_SOURCES``, by path and content)."""
    digest = hashlib.sha256(b"souk engine snapshot %d" % FORMAT)
    for source in _SOURCES:
        path = _ROOT / source
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def encode(table: tbl.Table, since: tuple[int, ...], head: str) -> bytes:
    packed = zlib.compress(tbl.encode_table(table), 1)
    return _encode(Snapshot(FORMAT, code(), table.version, head, since, packed, hashlib.sha256(packed).digest()))


def decode(raw: bytes | None) -> tuple[tbl.Table, tuple[int, ...], str] | None:
    """The table, since and head of a snapshot, or None when it is none, of other code, or damaged."""
    if not raw:
        return None
    try:
        snapshot = _decode(raw)
        if snapshot.format != FORMAT or snapshot.code != code():
            return None
        if hashlib.sha256(snapshot.table).digest() != snapshot.digest:
            log.warning("snapshot_damaged", version=snapshot.version)
            return None
        table = tbl.decode_table(zlib.decompress(snapshot.table))
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache, the events are the truth
        log.warning("snapshot_unreadable", error=str(exc)[:200])
        return None
    if not table.exists or table.version != snapshot.version or table.status not in (tbl.OPEN, tbl.PLAYING):
        return None
    return table, snapshot.since, snapshot.head
