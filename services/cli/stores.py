"""Which Redis a command uses, and the guard that keeps read models out of the event store.

``resolve``: REDIS_URL (and SOUK_VIEWS_REDIS_URL) when set, else the embedded Redis of the data folder that a
running ``souk serve`` recorded (``services.embedded.folder``).

``check``: each store carries its role in the hash ``souk:store`` (``id``, ``role`` events|views, and the id and
URL of its partner: an event store names its read store, which is its own id when one Redis holds both). A
command is refused, in one line and before it writes anything, when:

- REDIS_URL is a read store (events would go to a Redis without persistence);
- SOUK_VIEWS_REDIS_URL is a Redis that is some event store (read models would be mixed with its events);
- the read store is the event store itself (SOUK_VIEWS_REDIS_URL unset) while that event store's read models live in
  another Redis: the mistake that once wrote 194 read-model keys into the embedded event store
  (``souk projections rebuild`` with only REDIS_URL set).

An event store records its partitions (``partitions``, ``keys.partition``) when it is created; a store without
them has the old key layout (``OLD_GLOBAL``, ``OLD_GAME``) and is refused (``old_layout``) until ``migrate`` renames
its keys.

Otherwise the roles are recorded (the first use of a store gives it its id and role) and the partners updated:
a read store is disposable, so a new one (an empty Redis after a restart) simply takes the old one's place.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import replace

import redis
from redis.exceptions import RedisClusterException

from services.runtime.config import Settings
from services.store import clients, keys
from services.store.refusals import refusal

ROLE = "souk:store"  # hash: id, role, views + views_url (an event store's read store), events + events_url
# hash in a store that `souk store migrate --to` is copying into: the source's id and URL, the partitions. Written
# first, removed after the role hash (written last): a store holding it is half copied, and refused.
MIGRATION = "souk:migration"


class StoreError(RuntimeError):
    """A store that cannot be used, said in one line. ``transient``: it did not answer (it may be starting) or it
    refused for a while (out of memory, busy with a script, not persisting, a replica not yet promoted). ``code``:
    a stable code when the store is as it should not be (``old_layout``, ``bad_partitions``)."""

    def __init__(self, message: str, transient: bool = False, code: str = "") -> None:
        super().__init__(message)
        self.transient = transient
        self.code = code


def shown(url: str) -> str:
    """A URL without its password, for messages."""
    return re.sub(r"//([^:/@]*):[^@/]*@", r"//\1:***@", url)


def resolve(settings: Settings) -> Settings:
    """The settings with the stores' URLs: REDIS_URL's, else the data folder's embedded Redis (EmbeddedError)."""
    if settings.redis_url:
        return settings
    from services.embedded.folder import find

    found = find(settings.data_dir)
    return replace(settings, redis_url=found.events_url, views_redis_url=found.views_url)


def _client(url: str) -> redis.Redis:
    """A client of the store at ``url``. A cluster client asks its nodes for the slots as it is made: a cluster
    that does not answer is a transient StoreError here."""
    try:
        return clients.sync_client(url, socket_connect_timeout=3, socket_timeout=10, decode_responses=True)
    except (RedisClusterException, redis.RedisError) as exc:
        raise StoreError(f"cannot use the Redis Cluster at {shown(url)}: {_reason(exc)}", True) from None


def _identity(client: redis.Redis, role: str, what: str, url: str, partitions: int = 1) -> dict[str, str]:
    """The store's role hash, made if it has none. A new event store records ``partitions``; one that already held
    keys of the old layout (made before roles) records none: it is to be migrated."""
    try:
        if client.hsetnx(ROLE, "id", uuid.uuid4().hex) and role == "events" and not client.exists(*OLD_GLOBAL):
            client.hsetnx(ROLE, "partitions", partitions)
        client.hsetnx(ROLE, "role", role)
        return client.hgetall(ROLE)
    except redis.RedisError as exc:
        raise StoreError(f"cannot use the {what} at {shown(url)}: {_reason(exc)}", _transient(exc)) from None


def _not_half_migrated(client: redis.Redis, url: str) -> None:
    """Refuses (``migration_unfinished``), before anything is recorded in it, a store that a migration is copying
    into or stopped copying into half way (``MIGRATION``)."""
    try:
        source = client.hget(MIGRATION, "source_url")
    except redis.RedisError as exc:
        raise StoreError(f"cannot use the event store at {shown(url)}: {_reason(exc)}", _transient(exc)) from None
    if source is not None:
        raise StoreError(f"migration_unfinished: the event store at {shown(url)} is being migrated into from "
                         f"{source}, or a migration stopped half way: run `souk store migrate --to` again",
                         code="migration_unfinished")


def _transient(exc: Exception) -> bool:
    """Redis did not answer (it may be starting) or refused for a while: a store's refusal as the gateway reads
    them (``services.store.refusals``: loading, out of memory, busy, not persisting, a replica...). A refused
    password answered, so it is a mistake, not a wait."""
    return not isinstance(exc, redis.AuthenticationError) and refusal(exc) is not None


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rstrip(".")


def check(settings: Settings, views: bool = True, layout: bool = True) -> None:
    """Refuses (StoreError) stores that do not answer or whose roles say this command would mix them up; records
    the roles otherwise. ``views=False``: the command uses the event store only (its role is still checked).
    The event store's partitions are read from it and used by this process (``keys.use``); a new store records
    ``settings.partitions``. ``layout=False``: a store of the old layout is not refused (``souk store migrate``)."""
    events_url, views_url = settings.redis_url, settings.views_url
    events = _client(events_url)
    try:
        _not_half_migrated(events, events_url)
        e = _identity(events, "events", "event store (REDIS_URL)", events_url, settings.partitions)
        if e["role"] != "events":
            raise StoreError(f"REDIS_URL ({shown(events_url)}) is a read store"
                             + (f" (of the event store at {shown(e['events_url'])})" if e.get("events_url") else "")
                             + ": REDIS_URL must be the event store")
        if "partitions" in e:
            try:
                keys.use(e["partitions"])
            except keys.PartitionsError as exc:
                raise StoreError(f"the event store at {shown(events_url)} records {exc}", code=exc.code) from None
        elif layout:
            raise StoreError(f"old_layout: the event store at {shown(events_url)} has the key layout of before "
                             "partitions; stop Souk's services and run `souk store migrate` (it renames its keys)",
                             code="old_layout")
        if not views:
            return
        if views_url == events_url:
            v, read = e, events
        else:
            read = _client(views_url)
            v = _identity(read, "views", "read store (SOUK_VIEWS_REDIS_URL)", views_url)
        try:
            if v["id"] == e["id"]:  # one Redis holds both stores
                if e.get("views") and e["views"] != e["id"]:
                    raise StoreError(
                        f"{shown(events_url)} is an event store whose read models are kept in another Redis "
                        f"({shown(e.get('views_url', '?'))}); set SOUK_VIEWS_REDIS_URL to that one"
                        + (" or unset REDIS_URL to use the data folder's embedded Redis" if not settings.views_redis_url
                           else "") + ": read models must not be written into the event store")
                if e.get("views") != e["id"]:
                    events.hset(ROLE, mapping={"views": e["id"], "views_url": events_url})
                return
            if v["role"] != "views":
                raise StoreError(f"SOUK_VIEWS_REDIS_URL ({shown(views_url)}) is an event store, not a read store: "
                                 "read models must not be written into an event store")
            if v.get("events") and v["events"] == e.get("migrated_from"):
                raise StoreError(f"read_store_of_source: SOUK_VIEWS_REDIS_URL ({shown(views_url)}) holds the read "
                                 f"models of the event store this one was migrated from ({shown(v['events_url'])}), "
                                 "under that store's partitions: give it an empty read store (the projector "
                                 "rebuilds it)", code="read_store_of_source")
            if v.get("events") != e["id"]:
                read.hset(ROLE, mapping={"events": e["id"], "events_url": events_url})
            if e.get("views") != v["id"]:
                events.hset(ROLE, mapping={"views": v["id"], "views_url": views_url})
        except redis.RedisError as exc:
            raise StoreError(f"cannot use the stores at {shown(events_url)} and {shown(views_url)}: "
                             f"{_reason(exc)}", _transient(exc)) from None
        finally:
            if read is not events:
                read.close()
    finally:
        events.close()


# The old layout (before partitions): the event store's keys, named without a partition's hash tag.
OLD_GLOBAL = {"souk:commands": keys.commands, "souk:events": keys.events, "souk:games": keys.games,
              "souk:refusals": keys.refusals, "souk:deadlines": keys.deadlines,
              "souk:webhooks:outbox": keys.webhook_outbox, "souk:webhooks:deliveries": keys.webhook_deliveries,
              "souk:webhooks:dead": keys.webhook_dead}
# A game's old keys by their prefix (the game id follows it), the most specific prefixes first.
OLD_GAME = {"souk:outcomes:order:": keys.outcome_order, "souk:outcomes:": keys.outcomes, "souk:head:": keys.head,
            "souk:engine:snapshot:": keys.engine_snapshot, "souk:seed:": keys.seed, "souk:order:": keys.order,
            "souk:webhooks:position:": keys.webhook_position, "souk:webhooks:": keys.webhooks,
            "souk:game:": keys.game_stream}


def migrate(settings: Settings) -> tuple[int, int] | None:
    """Renames an old-layout event store's keys to the partitions' layout with one partition (RENAME: its streams
    keep their consumer groups and pending entries), then records ``partitions`` = 1 (last: a migration stopped
    half way is simply run again). Souk's services must be stopped. Returns (partition keys, game keys) renamed;
    None for a store that has its partitions already."""
    check(settings, views=False, layout=False)
    if settings.partitions != 1:
        raise StoreError("bad_partitions: `souk store migrate` moves an old store to one partition (its streams "
                         "are renamed whole); set SOUK_PARTITIONS=1 or leave it unset", code="bad_partitions")
    events = _client(settings.redis_url)
    try:
        if events.hexists(ROLE, "partitions"):
            return None
        keys.use(1)
        moved = sum(_rename(events, old, new(0)) for old, new in OLD_GLOBAL.items())
        games = 0
        taken: set[str] = set()
        for prefix, new in OLD_GAME.items():
            found = [k for k in events.scan_iter(match=f"{prefix}*", count=1000)
                     if k not in OLD_GLOBAL and k not in taken and not k.startswith(
                         tuple(p for p in OLD_GAME if len(p) > len(prefix) and p.startswith(prefix)))]
            taken.update(found)
            for key in found:
                games += _rename(events, key, new(key[len(prefix):]))
        events.hset(ROLE, "partitions", 1)
        return moved, games
    except redis.RedisError as exc:
        raise StoreError(f"cannot migrate the event store at {shown(settings.redis_url)}: {_reason(exc)}",
                         _transient(exc)) from None
    finally:
        events.close()


def _rename(client: redis.Redis, old: str, new: str) -> int:
    try:
        client.rename(old, new)
        return 1
    except redis.ResponseError as exc:  # gone meanwhile, or never there
        if "no such key" in str(exc).lower():
            return 0
        raise
