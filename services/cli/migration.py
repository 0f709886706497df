"""`souk store migrate --to URL`: an event store of one Redis copied into another Redis, or onto a Redis Cluster, with
the number of partitions ``SOUK_PARTITIONS`` gives (issue #22: a store that outgrew its Redis moves without losing a
game).

Souk's services are stopped during it: a consumer that read one of the source's command or events streams in the
last ``LIVE_MS`` is a running service, and the migration is refused (``services_running``), for the source would go
on changing under the copy. What goes over, and how:

- every game's keys (``keys.GAME_KEYS``: its stream, outcomes, chain head, seed, seats' order, engine snapshot,
  webhooks...) byte for byte (DUMP and RESTORE, with their time to live) under the target's names: the game's
  partition among the target's;
- each partition's indexes (games, refusals, deadlines, the webhooks' outbox and its deliveries) split by game among
  the target's partitions;
- each partition's command and events streams rebuilt from the source's entries that some consumer group has not
  acknowledged yet (delivered and pending, or not yet delivered; every entry of a stream without a group). An
  acknowledged command is answered for good, an acknowledged event projected and its notices queued; the game
  streams keep every event, and a projector facing an empty read store rebuilds it from them. A target partition's
  stream takes its games' entries merged from every source partition in the order of their ids (the source Redis's
  clock: the order they were committed in), keeping the ids (a seat's commands are ordered by them, ``keys.order``),
  with the source's consumer groups at its first entry and its last id past every source id, so that what is
  queued next comes after. The webhooks' dead letters are split the same way, all of them;
- the global keys (parked commands, the tokens' secret, create requests, tombstones, the expiry cursor) as they are.

Read models are not copied (a store that is its own read store holds them): the target's projector rebuilds an empty
read store. The source is only read.

The target must be empty. A marker (``stores.MIGRATION``) goes into it first; the role hash, with ``partitions``, last,
once the copy is verified (each game's stream and chain head equal to the source's, the head the hash of its last
event, the games, keys and entries counted): a migration stopped half way leaves its marker, so the services refuse
the target (``migration_unfinished``) and the same command run again empties it and starts over.
"""

from __future__ import annotations

import fnmatch
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import redis
from redis.exceptions import RedisClusterException

from services.cli.stores import MIGRATION, ROLE, StoreError, check, shown
from services.engine.service import entry_id
from services.runtime.config import Settings
from services.store import clients, keys
from services.store.codec import command_envelope_decoder, entry_hash
from services.webhooks import outbox

LIVE_MS = 30_000  # a consumer that read the source's streams this recently is a running service
CHUNK = 500  # keys or entries a round trip


def _rest(name: str) -> str:
    """What follows a key's partition tag: ``game:g1`` of ``souk:{p3}:game:g1``."""
    return name.split("}:", 1)[1]


# The event store's keys by what follows their partition's tag: a partition's own, and a game's by the prefix of
# its id (the longest first: ``outcomes:order:`` before ``outcomes:``).
PARTITION_KINDS: dict[str, Callable[[int], str]] = {_rest(kind(0)): kind for kind in keys.PARTITION_KEYS}
GAME_KINDS: dict[str, Callable[[str], str]] = dict(sorted(
    ((_rest(kind("-"))[:-1], kind) for kind in keys.GAME_KEYS), key=lambda item: -len(item[0])))
# The read store's keys (``keys.read_model_keys``, the lobbies; untagged: the projection's mark and rebuild lock, the
# rate limits' and clients' open games, the layout before partitions): left behind, the target's is rebuilt.
READ_KINDS = (*(_rest(name)[:-1] for name in keys.read_model_keys("-")), "lobby")
READ_GLOBAL = ("souk:projection:", "souk:{c:", "souk:{t:")


@dataclass
class Plan:
    """The source's keys, sorted: a game's (game id -> [(key, the function naming it in the target)]), a
    partition's by kind, the global ones, and how many read models stay behind."""

    games: dict[str, list[tuple[str, Callable[[str], str]]]] = field(default_factory=dict)
    partition: dict[str, list[str]] = field(default_factory=dict)
    global_keys: list[str] = field(default_factory=list)
    read_models: int = 0


@dataclass
class Summary:
    source_url: str
    target_url: str
    source_partitions: int
    partitions: int
    games: int = 0
    game_keys: int = 0
    global_keys: int = 0
    index_entries: int = 0
    commands: int = 0
    events: int = 0
    dead_letters: int = 0

    def __str__(self) -> str:
        was = f"{self.source_partitions} partition{'s' if self.source_partitions != 1 else ''}"
        return (f"migrated the event store at {shown(self.source_url)} ({was} -> {self.partitions}) to "
                f"{shown(self.target_url)}: {self.games} games ({self.game_keys} keys), {self.global_keys} global "
                f"keys, {self.index_entries} index entries, {self.dead_letters} webhook dead letters; carried over "
                f"what no consumer group had acknowledged: {self.commands} commands, {self.events} events. Verified: "
                "every game's stream and chain head, the counts; the role hash written. Start Souk's services on it "
                "with an empty read store (SOUK_VIEWS_REDIS_URL): the projector rebuilds it")


def migrate_to(settings: Settings, target_url: str) -> Summary | None:
    """Copies the event store of ``settings`` (stopped) into the empty store at ``target_url`` with
    ``settings.partitions`` partitions, verifies it, and records its role last. None: the target is this source's
    finished migration already. StoreError (with its code) for what is refused, before anything is written."""
    try:
        partitions = keys.checked(settings.partitions)
    except keys.PartitionsError as exc:
        raise StoreError(str(exc), code=exc.code) from None
    if target_url == settings.redis_url:
        raise StoreError("same_store: the target (--to) is the source (REDIS_URL)", code="same_store")
    if clients.is_cluster(settings.redis_url):
        raise StoreError("cluster_source: `souk store migrate --to` moves the store of one Redis (REDIS_URL is a "
                         "cluster's)", code="cluster_source")
    source, target = _open(settings.redis_url, "source"), _open(target_url, "target")
    try:
        if not source.exists(ROLE):  # an empty Redis, or another program's: nothing is recorded in it
            raise StoreError(f"not_a_store: REDIS_URL ({shown(settings.redis_url)}) holds no event store",
                             code="not_a_store")
        check(settings, views=False)  # the source: an event store of partitions (else old_layout); its P used here
        return _migrate(source, target, settings.redis_url, target_url, partitions)
    except (RedisClusterException, redis.RedisError) as exc:
        raise StoreError(f"the migration to {shown(target_url)} stopped: {exc}; run it again", True) from None
    finally:
        source.close()
        target.close()


def _open(url: str, what: str) -> Any:
    try:
        return clients.sync_client(url, socket_connect_timeout=3, socket_timeout=30)
    except clients.ClusterUrlError as exc:
        raise StoreError(str(exc), code=exc.code) from None
    except ValueError as exc:
        raise StoreError(f"bad_url: the {what} {shown(url)!r} is no Redis URL: {exc}", code="bad_url") from None
    except (RedisClusterException, redis.RedisError) as exc:
        raise StoreError(f"cannot use the Redis Cluster at {shown(url)}: {exc}", True) from None


def _migrate(source: Any, target: Any, source_url: str, target_url: str, partitions: int) -> Summary | None:
    role = source.hgetall(ROLE)
    source_id = role[b"id"]
    summary = Summary(source_url, target_url, len(keys.PARTITIONS), partitions)
    plan = _plan(source)
    _refuse_live_consumers(source, plan)
    if target.hget(ROLE, "id") == source_id:
        raise StoreError(f"same_store: the target {shown(target_url)} is the source", code="same_store")
    marker = target.hgetall(MIGRATION)
    if not marker and target.hget(ROLE, "migrated_from") == source_id:
        return None
    if marker.get(b"source") == source_id:  # run again after it stopped half way: start over
        _empty(target)
    elif marker or target.dbsize():
        raise StoreError(f"target_not_empty: the target {shown(target_url)} holds keys; a store is migrated into "
                         "an empty Redis (or cluster)", code="target_not_empty")
    else:
        target.hset(MIGRATION, mapping={"source": source_id, "source_url": shown(source_url),
                                        "partitions": partitions, "started_at": repr(time.time())})
    keys.use(partitions)  # from here on, ``keys`` names the target's keys
    pairs = [(key, name(game_id)) for game_id, found in plan.games.items() for key, name in found]
    summary.games, summary.game_keys = len(plan.games), _restore(source, target, pairs)
    summary.global_keys = _restore(source, target, [(key, key) for key in plan.global_keys])
    summary.index_entries = _split_indexes(source, target, plan)
    summary.commands = _merge_streams(source, target, plan.partition.get("commands", []), keys.commands,
                                      _unacknowledged, _command_game)
    summary.events = _merge_streams(source, target, plan.partition.get("events", []), keys.events,
                                    _unacknowledged, lambda f: f[b"g"].decode())
    summary.dead_letters = _merge_streams(source, target, plan.partition.get(_rest(keys.webhook_dead(0)), []),
                                          keys.webhook_dead, _entries, lambda f: outbox.decode(f[b"d"]).game_id)
    verified(source, target, plan, pairs, summary)
    target.hset(ROLE, mapping={"id": uuid.uuid4().hex, "role": "events", "partitions": partitions,
                               "migrated_from": source_id})
    target.delete(MIGRATION)
    return summary


def _plan(source: Any) -> Plan:
    """Every ``souk:`` key of the source sorted by what it is; a tagged key of no known kind is refused
    (``unknown_key``: copied blindly, it could be in the wrong slot)."""
    plan = Plan()
    for raw in source.scan_iter(match="souk:*", count=1000):
        name = raw.decode()
        if name == ROLE:
            continue
        if not name.startswith("souk:{p"):
            if name.startswith(READ_GLOBAL) or any(fnmatch.fnmatchcase(name, p) for p in keys.OLD_READ_MODELS):
                plan.read_models += 1
            else:
                plan.global_keys.append(name)
            continue
        rest = _rest(name)
        if rest in PARTITION_KINDS:
            plan.partition.setdefault(rest, []).append(name)
        elif rest.startswith(READ_KINDS):
            plan.read_models += 1
        else:
            prefix = next((p for p in GAME_KINDS if rest.startswith(p)), None)
            if prefix is None:
                raise StoreError(f"unknown_key: the source holds {name!r}, of no kind this Souk knows; nothing was "
                                 "written", code="unknown_key")
            plan.games.setdefault(rest[len(prefix):], []).append((name, GAME_KINDS[prefix]))
    return plan


def _refuse_live_consumers(source: Any, plan: Plan) -> None:
    live = [f"{stream}/{_text(group['name'])}/{_text(consumer['name'])}"
            for stream in plan.partition.get("commands", []) + plan.partition.get("events", [])
            for group in source.xinfo_groups(stream)
            for consumer in source.xinfo_consumers(stream, group["name"]) if consumer["idle"] < LIVE_MS]
    if live:
        raise StoreError(f"services_running: consumers read the source's streams in the last {LIVE_MS // 1000} s "
                         f"({', '.join(live)}): stop Souk's services first", code="services_running")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _empty(target: Any) -> None:
    """Deletes every key of the target but the migration's marker (a rerun: they were all written by it)."""
    found = [k for k in target.scan_iter(count=1000) if k != MIGRATION.encode()]
    for chunk in _chunks(found):
        pipe = target.pipeline(transaction=False)
        for key in chunk:
            pipe.delete(key)
        pipe.execute()


def _chunks(items: list, size: int = CHUNK) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _restore(source: Any, target: Any, pairs: list[tuple[str, str]]) -> int:
    """Each source key copied to its target name (DUMP, RESTORE with its time to live, replacing). Returns how
    many (a key gone meanwhile is not: the services are stopped, so none)."""
    copied = 0
    for chunk in _chunks(pairs):
        pipe = source.pipeline(transaction=False)
        for key, _ in chunk:
            pipe.pttl(key)
            pipe.dump(key)
        read = pipe.execute()
        pipe = target.pipeline(transaction=False)
        for (_, name), ttl, payload in zip(chunk, read[::2], read[1::2]):
            if payload is not None:
                pipe.restore(name, max(ttl, 0), payload, replace=True)
                copied += 1
        pipe.execute()
    return copied


def _split_indexes(source: Any, target: Any, plan: Plan) -> int:
    """The partitions' sorted sets by game (games and deadlines by member, refusals by the member's game, the
    webhooks' outbox by its delivery's), and the deliveries' hash by the delivery's game. Returns the entries."""
    deliveries = {field: value for key in plan.partition.get(_rest(keys.webhook_deliveries(0)), [])
                  for field, value in source.hscan_iter(key)}
    game_of_delivery = {field: outbox.decode(value).game_id for field, value in deliveries.items()}
    # (an outbox id without its delivery is dropped, as the webhook worker would drop it)
    by_member: dict[str, Callable[[bytes], str | None]] = {
        "games": bytes.decode, "deadlines": bytes.decode, "refusals": lambda m: m.decode().split("\n", 1)[0],
        _rest(keys.webhook_outbox(0)): game_of_delivery.get}
    writes = [(PARTITION_KINDS[kind](keys.partition(game_id)), member, score)
              for kind, game_of in by_member.items() for key in plan.partition.get(kind, [])
              for member, score in source.zscan_iter(key) if (game_id := game_of(member)) is not None]
    for chunk in _chunks(writes):
        pipe = target.pipeline(transaction=False)
        for key, member, score in chunk:
            pipe.zadd(key, {member: score})
        pipe.execute()
    for chunk in _chunks(list(deliveries.items())):
        pipe = target.pipeline(transaction=False)
        for delivery, value in chunk:
            pipe.hset(keys.webhook_deliveries(keys.partition(game_of_delivery[delivery])), delivery, value)
        pipe.execute()
    return len(writes) + len(deliveries)


def _entries(source: Any, stream: str) -> Iterable[tuple[bytes, dict[bytes, bytes]]]:
    """Every entry of a stream, in order, a chunk a round trip."""
    after = "-"
    while True:
        chunk = source.xrange(stream, min=after, count=CHUNK)
        yield from chunk
        if len(chunk) < CHUNK:
            return
        after = "(" + chunk[-1][0].decode()


def _unacknowledged(source: Any, stream: str) -> Iterable[tuple[bytes, dict[bytes, bytes]]]:
    """The entries some consumer group has not acknowledged: pending in it, or after the last it was delivered
    (every entry when the stream has no group)."""
    groups = []
    for group in source.xinfo_groups(stream):
        pending: set[bytes] = set()
        after = "-"
        while batch := source.xpending_range(stream, group["name"], after, "+", CHUNK):
            pending.update(p["message_id"] for p in batch)
            after = "(" + batch[-1]["message_id"].decode()
        groups.append((entry_id(group["last-delivered-id"]), pending))
    return (e for e in _entries(source, stream)
            if not groups or any(entry_id(e[0]) > last or e[0] in pending for last, pending in groups))


def _command_game(fields: dict[bytes, bytes]) -> str:
    """A queued command's game; an unreadable one goes to the first partition, where the engine parks it."""
    try:
        return command_envelope_decoder.decode(fields[b"c"]).game_id
    except (KeyError, msgspec.ValidationError, msgspec.DecodeError):
        return ""


def _merge_streams(source: Any, target: Any, streams: list[str], name: Callable[[int], str],
                   entries: Callable[[Any, str], Iterable[tuple[bytes, dict[bytes, bytes]]]],
                   game_of: Callable[[dict[bytes, bytes]], str]) -> int:
    """The source partitions' ``streams`` rebuilt as the target partitions' (``name``): ``entries`` of each in the
    partition of its game (``game_of``; "": the first), merged in id order keeping the ids (an id already taken by
    the other source partition's entry of the same instant becomes the next one), with every consumer group of the
    source's at the first entry, and the last id past every source stream's. Returns the entries."""
    by_partition: dict[int, list[tuple[tuple[int, int], dict[bytes, bytes]]]] = {p: [] for p in keys.PARTITIONS}
    groups: set[bytes] = set()
    last = (0, 0)
    for stream in streams:
        groups.update(g["name"] for g in source.xinfo_groups(stream))
        last = max(last, entry_id(source.xinfo_stream(stream)["last-generated-id"]))
        for entry, fields in entries(source, stream):
            game_id = game_of(fields)
            by_partition[keys.partition(game_id) if game_id else 0].append((entry_id(entry), fields))
    carried = 0
    for partition, found in by_partition.items():
        stream = name(partition)
        pipe = target.pipeline(transaction=False)
        for group in sorted(groups):
            pipe.xgroup_create(stream, group, id="0", mkstream=True)
        top = (0, 0)
        for wanted, fields in sorted(found, key=lambda item: item[0]):
            top = wanted if wanted > top else (top[0], top[1] + 1)
            pipe.xadd(stream, fields, id=f"{top[0]}-{top[1]}")
        if groups or found:
            top = max(top, last)
            pipe.execute_command("XSETID", stream, f"{top[0]}-{top[1]}")
        pipe.execute()
        carried += len(found)
    return carried


def verified(source: Any, target: Any, plan: Plan, pairs: list[tuple[str, str]], summary: Summary) -> None:
    """Refuses (``verify_failed``, the role hash not written) a copy whose games' streams or chain heads differ from
    the source's, whose head is not the hash of its game's last event, or whose counts are off."""
    problems: list[str] = []
    streams = {game_id: (key, keys.game_stream(game_id)) for game_id, found in plan.games.items()
               for key, name in found if name is keys.game_stream}
    heads = {game_id: (key, keys.head(game_id)) for game_id, found in plan.games.items()
             for key, name in found if name is keys.head}
    for chunk in _chunks(sorted(streams), 100):
        read = []
        for client, side in ((source, 0), (target, 1)):
            pipe = client.pipeline(transaction=False)
            for game_id in chunk:
                pipe.xrange(streams[game_id][side])
                if game_id in heads:
                    pipe.get(heads[game_id][side])
            replies = iter(pipe.execute())
            read.append([(next(replies), next(replies) if game_id in heads else None) for game_id in chunk])
        for game_id, old, (stream, head) in zip(chunk, *read):
            if old != (stream, head):
                problems.append(f"{game_id}: its stream or chain head differs")
            elif head is not None and stream and entry_hash(stream[-1][1][b"e"]) != head.decode():
                problems.append(f"{game_id}: its chain head is not its last event's hash")
    games = sum(source.zcard(key) for key in plan.partition.get("games", []))
    if sum(target.zcard(keys.games(p)) for p in keys.PARTITIONS) != games:
        problems.append(f"the games' indexes do not hold the source's {games} games")
    copied = sum(target.exists(*[name for _, name in chunk]) for chunk in _chunks(pairs) if chunk)
    if copied != summary.game_keys:
        problems.append(f"{copied} of the {summary.game_keys} game keys copied are there")
    for what, name, carried in (("commands", keys.commands, summary.commands), ("events", keys.events, summary.events)):
        there = sum(target.xlen(name(p)) for p in keys.PARTITIONS)
        if there != carried:
            problems.append(f"the {what} streams hold {there} entries, not the {carried} carried over")
    if problems:
        raise StoreError(f"verify_failed: the copy at {shown(summary.target_url)} does not hold ({len(problems)} "
                         f"problems; the first: {problems[0]}): run the migration again", code="verify_failed")
