"""The history's hashes commit to secrets without giving them away (issue #8, item 1), and the record stays
verifiable: by anyone at any time from the spectator's history, and in full from the audit once the game is over.

The attack is the one found from outside: a history entry whose secret is redacted still carried the hash of the
whole event, so hashing every candidate value of the secret found it. Here every candidate of the tally game's
secret numbers (0-99 each) is tried against every digest a spectator or another seat receives.
"""

from __future__ import annotations

import hashlib
import itertools

import msgspec
import pytest

from contracts.envelope import ChainLink, EventEnvelope, chain_hash, link_hash
from contracts.readmodels import HistoryRecord
from contracts.table import CreateGame, JoinSeat
from services.store import keys
from services.history.audit import verify_audit, verify_history
from services.store.codec import encoder
from services.engine.service import Engine
from services.projector.service import Projector
from services.store.events import RedisEventStore
from tests.services.tally import Add, SecretsDrawn
from tests.services.test_engine import cmd, th

pytestmark = pytest.mark.anyio
_entry_decoder = msgspec.json.Decoder(HistoryRecord)


async def played(redis, seed: str | None = None) -> tuple[Engine, str]:
    """A two-seat tally game played to its end through the engine, and projected."""
    engine = Engine(redis, RedisEventStore(redis))
    create = CreateGame("tally", "secret", 2, {}, seed, unfair=seed is not None)
    replies = await engine.handle([cmd("g1", create, cid="create")]
                                  + [cmd("g1", JoinSeat(f"p{s}", th(s), s), seat=s, cid=f"j{s}") for s in (0, 1)])
    assert all(r.status == "accepted" for r in replies), replies
    while (slot := await engine.load("g1")).table.status == "playing":
        turn = slot.table.state.turn
        [reply] = await engine.handle([cmd("g1", Add(3), seat=turn, token=th(turn), cid=f"v{slot.table.version}")])
        assert reply.status == "accepted"
    projector = Projector(redis, engine.store)
    await projector.handle([fields for _, fields in await redis.xrange(keys.events(0))])
    await projector.aclose()
    return engine, "g1"


async def history_as(redis, game_id: str, audience: str) -> list:
    return [_entry_decoder.decode(r).for_audience(audience) for r in await redis.lrange(keys.history(game_id), 0, -1)]


def candidates_of(shown: SecretsDrawn):
    """Every value the redacted secrets (-1) may hold."""
    slots = [range(100) if s == -1 else (s,) for s in shown.secrets]
    for values in itertools.product(*slots):
        yield SecretsDrawn(tuple(values), shown.first)


def digests_of(entry, game_id: str, candidate) -> set[str]:
    """What an attacker computes from one guess and the entry's public fields: the old chain's hash of the whole
    envelope, the new chain's link with the guess in place of what it was shown, and the guess's plain sha256."""
    payload = msgspec.Raw(encoder.encode(candidate))
    old = EventEnvelope(game_id, entry.seq, entry.type, payload, entry.command_id, entry.seat, entry.recorded_at,
                        entry.prev_hash)
    link = ChainLink(game_id, entry.seq, entry.type, entry.command_id, entry.seat, entry.recorded_at,
                     entry.prev_hash, payload, entry.commitment)
    return {chain_hash(old), link_hash(link), hashlib.sha256(bytes(payload)).hexdigest()}


@pytest.mark.parametrize("audience", ["spectator", "0", "1"])
async def test_no_digest_a_reader_receives_lets_it_find_a_secret_it_may_not_see(redis, audience):
    _, game_id = await played(redis)
    stored = await RedisEventStore(redis).read(game_id)
    secret_entries = [e for e in await history_as(redis, game_id, audience) if e.type == "tally.SecretsDrawn"]
    assert secret_entries
    for entry in secret_entries:
        shown = msgspec.convert(entry.event, SecretsDrawn) if isinstance(entry.event, dict) else \
            msgspec.json.decode(encoder.encode(entry.event), type=SecretsDrawn)
        assert -1 in shown.secrets  # something is hidden from this reader
        truth = msgspec.json.decode(stored[entry.seq - 1].payload, type=SecretsDrawn)
        received = {entry.hash, entry.commitment} - {""}
        found = [c for c in candidates_of(shown) if digests_of(entry, game_id, c) & received]
        assert found == [], f"{audience} recovers the secrets {truth.secrets} from the history's digests"


async def test_the_spectator_history_verifies_at_any_time_and_the_audit_in_full_after_the_end(redis):
    engine, game_id = await played(redis, seed="ab" * 32)
    entries = [msgspec.to_builtins(e) for e in await history_as(redis, game_id, "spectator")]
    assert verify_history(game_id, entries) == []
    envelopes = await engine.store.read(game_id)
    audit = {"game_id": game_id, "seed": "ab" * 32, "seed_hash": hashlib.sha256(bytes.fromhex("ab" * 32)).hexdigest(),
             "events": msgspec.json.decode(encoder.encode(envelopes))}
    assert verify_audit(audit) == []
    assert any(e.commitment for e in envelopes)

    # a secret changed after the fact is caught by its commitment; a public field, by the chain
    secret = next(i for i, e in enumerate(audit["events"]) if e.get("commitment"))
    forged = [dict(e) for e in audit["events"]]
    forged[secret]["payload"] = {**forged[secret]["payload"], "secrets": [0, 0]}
    assert any("commitment" in p for p in verify_audit({**audit, "events": forged}))
    forged = [dict(e) for e in audit["events"]]
    forged[-2]["seat"] = 1 - (forged[-2]["seat"] or 0)
    assert any("hash" in p for p in verify_audit({**audit, "events": forged}))
    wrong_seed = {**audit, "seed": "cd" * 32}
    assert verify_audit(wrong_seed)
