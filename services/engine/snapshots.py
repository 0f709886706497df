"""The engine's snapshots: a game's cold load (not in the engine's cache) starts from its latest snapshot and folds
only the events after it (issue #18: 164 ms at 10,000 events when every load folded from the first event).

Every ``SOUK_ENGINE_SNAPSHOT_EVERY`` events (100; 0: none), once a command's append went through, the engine writes
the slot it holds then (the table, each seat's ``awaited_since``, the chain head, the ids of the commands accepted:
``Accepted``) to ``souk:engine:snapshot:{game}`` in
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

import bisect
import hashlib
import zlib
from array import array
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
    digest: bytes  # sha256 of ``table`` and ``accepted``
    accepted: bytes = b""  # the game's accepted command ids (``Accepted.to_bytes``)


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


class Accepted:
    """The ids of the commands a game accepted, as 64-bit digests (8 bytes each, sorted, with the latest in a set):
    what tells a resend of an accepted command whose outcome left the store's window (``SOUK_OUTCOME_WINDOW``) from
    a new command. Built from the game stream (every event carries its command's id), kept in the snapshot."""

    __slots__ = ("base", "recent")
    MERGE = 256

    def __init__(self, base: array | None = None) -> None:
        self.base = base if base is not None else array("Q")
        self.recent: set[int] = set()

    @staticmethod
    def digest(command_id: str) -> int:
        return int.from_bytes(hashlib.blake2b(command_id.encode(), digest_size=8).digest(), "big")

    def __contains__(self, command_id: str) -> bool:
        d = self.digest(command_id)
        if d in self.recent:
            return True
        i = bisect.bisect_left(self.base, d)
        return i < len(self.base) and self.base[i] == d

    def add(self, command_id: str) -> None:
        self.recent.add(self.digest(command_id))
        if len(self.recent) > self.MERGE:
            self._merge()

    def _merge(self) -> None:
        if self.recent:
            self.base = array("Q", sorted(set(self.base).union(self.recent)))
            self.recent = set()

    def __len__(self) -> int:
        return len(self.base) + len(self.recent)

    def to_bytes(self) -> bytes:
        self._merge()
        return self.base.tobytes()

    @classmethod
    def of(cls, command_ids) -> Accepted:
        out = cls(array("Q", sorted({cls.digest(c) for c in command_ids})))
        return out

    @classmethod
    def from_bytes(cls, raw: bytes) -> Accepted:
        base = array("Q")
        base.frombytes(raw)  # sorted when written (the snapshot's digest covers it)
        return cls(base)


def encode(table: tbl.Table, since: tuple[int, ...], head: str, accepted: Accepted | None = None) -> bytes:
    packed = zlib.compress(tbl.encode_table(table), 1)
    ids = accepted.to_bytes() if accepted is not None else b""
    return _encode(Snapshot(FORMAT, code(), table.version, head, since, packed,
                            hashlib.sha256(packed + ids).digest(), ids))


def decode(raw: bytes | None) -> tuple[tbl.Table, tuple[int, ...], str, Accepted] | None:
    """The table, since, head and accepted command ids of a snapshot, or None when it is none, of other code, or
    damaged."""
    if not raw:
        return None
    try:
        snapshot = _decode(raw)
        if snapshot.format != FORMAT or snapshot.code != code():
            return None
        if hashlib.sha256(snapshot.table + snapshot.accepted).digest() != snapshot.digest:
            log.warning("snapshot_damaged", version=snapshot.version)
            return None
        table = tbl.decode_table(zlib.decompress(snapshot.table))
        accepted = Accepted.from_bytes(snapshot.accepted)
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with a cache, the events are the truth
        log.warning("snapshot_unreadable", error=str(exc)[:200])
        return None
    if not table.exists or table.version != snapshot.version or table.status not in (tbl.OPEN, tbl.PLAYING):
        return None
    return table, snapshot.since, snapshot.head, accepted
