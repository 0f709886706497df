"""Checking a game's record, as anyone can: the hash chain, the commitments to its secrets, and its seed.

``verify_audit`` takes what ``GET /games/{id}/audit`` returns once a game is over (every event unredacted, the
seed); ``verify_history`` takes the entries of a spectator's history, at any time: their chain links hold only
what a spectator sees and the commitments (contracts.envelope.ChainLink). ``souk verify`` runs them on a server's
game. Each returns the problems found; an empty list means the record holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from contracts.envelope import GENESIS_HASH, ChainLink, EventEnvelope, chain_hash, commitment, link_hash

_encode = msgspec.json.Encoder().encode
_envelope = msgspec.json.Decoder(EventEnvelope)


def _raw(value: Any) -> msgspec.Raw:
    return value if isinstance(value, msgspec.Raw) else msgspec.Raw(_encode(value))


def verify_audit(audit: dict[str, Any]) -> list[str]:
    """The audit of a finished game: the seed matches the hash published at creation, every event links to the
    one before, every commitment opens to the event's payload with the salt the seed gives, and the game's chance
    is that seed mixed with the seats' entropy as GameStarted committed."""
    problems: list[str] = []
    seed = bytes.fromhex(audit["seed"])
    if hashlib.sha256(seed).hexdigest() != audit["seed_hash"]:
        problems.append("the seed does not match the seed hash published at creation")
    prev = GENESIS_HASH
    for raw in audit["events"]:
        env = _envelope.decode(_encode(raw))  # payload and public as the JSON the chain hashed
        where = f"event {env.seq}"
        if env.prev_hash != prev:
            problems.append(f"{where}: prev_hash does not link to the event before")
        if chain_hash(env) != env.hash:
            problems.append(f"{where}: its hash does not match its content")
        if env.chain >= 2 and env.public:
            if commitment(seed, env.game_id, env.seq, bytes(env.payload)) != env.commitment:
                problems.append(f"{where}: its commitment does not open to its payload")
        elif env.chain >= 2 and env.commitment:
            problems.append(f"{where}: a commitment without a public part")
        prev = env.hash
    return problems + _chance_problems(audit, seed)


def _chance_problems(audit: dict[str, Any], seed: bytes) -> list[str]:
    """The game's chance: the server's seed mixed with the entropy of the seats taken at the start, against
    GameStarted's commitment (``domain.table.check_chance``, as ``souk verify FILE`` checks a record)."""
    from domain.table import check_chance
    from services.store.codec import decode_stream

    try:
        events = decode_stream([_envelope.decode(_encode(raw)) for raw in audit["events"]])
    except (msgspec.ValidationError, msgspec.DecodeError, ValueError, KeyError) as exc:
        return [f"the events cannot be read as this game's: {exc}"]
    return [f"chance: {problem}" for problem in check_chance(events, seed)]


def verify_history(game_id: str, entries: Sequence[dict[str, Any]]) -> list[str]:
    """A spectator's history, from its first event: every chain-2 entry's hash is the hash of its link (what the
    spectator sees, and the commitment to the rest), and links to the entry before."""
    problems: list[str] = []
    prev = GENESIS_HASH
    for entry in entries:
        where = f"event {entry['seq']}"
        if entry["prev_hash"] != prev:
            problems.append(f"{where}: prev_hash does not link to the entry before")
        if entry.get("chain", 1) >= 2:
            link = ChainLink(game_id, entry["seq"], entry["type"], entry["command_id"], entry["seat"],
                             entry["recorded_at"], entry["prev_hash"], _raw(entry["event"]), entry.get("commitment", ""))
            if link_hash(link) != entry["hash"]:
                problems.append(f"{where}: its hash does not match what it shows and commits to")
        prev = entry["hash"]
    return problems


def fetch(url: str) -> Any:
    """GET a JSON document (the standard library's client: ``souk verify`` needs nothing the plain install lacks)."""
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - the operator's own server
            return json.load(response)
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        raise SystemExit(f"souk verify: {url} answered {exc.code}: {body[:300]}") from None


def verify_game(server: str, game_id: str) -> tuple[str, list[str]]:
    """What ``souk verify`` does: the audit of a finished game, else the spectator's history so far."""
    server = server.rstrip("/")
    lobby = fetch(f"{server}/games/{game_id}")
    if lobby["status"] == "over":
        return "audit", verify_audit(fetch(f"{server}/games/{game_id}/audit"))
    entries: list[dict[str, Any]] = []
    while True:
        page = fetch(f"{server}/games/{game_id}/history?after={len(entries)}&limit=1000")
        if not page["entries"]:
            return "history", verify_history(game_id, entries)
        entries += page["entries"]
