"""Every Redis key Souk uses, in one place.

Two stores, which may be one Redis: the event store (REDIS_URL: commands, game streams, the events stream,
outcomes, seeds, chain heads, the engine's snapshots; durable, AOF) and the read store (SOUK_VIEWS_REDIS_URL: views, history, lobby,
projection positions, seat token hashes, update notifications; disposable, rebuilt from the events).

The event store's games hash to P partitions (``partition``: CRC-32 of the game id modulo P; P fixed when the store
is created, ``PARTITIONS``). Every key of a game, and every key a script touches with a game's keys, carries its
partition's hash tag (``souk:{p3}:game:<id>``): each partition has its own command stream, events stream, games
index, refusals, deadline index and webhook outbox, so all that one Lua script or transaction touches for a game
lives in one Redis Cluster slot. The keys no script touches with a game's keys stay global: ``PARKED`` (the
engine's parked commands), ``TOKEN_SECRET``, ``request`` (a create request's game id), ``ARCHIVED`` (tombstones),
``replies`` (pub/sub) and the open games' expiry cursor (``services.engine.upkeep``).

The read store is partitioned the same way, with the same P (its keys below): a game's read models and its
partition's lobby share the partition's tag; a client's and a seat token's rate-limit keys have a tag of their own.

Stores made before the partitions (no ``partitions`` in their role hash) have the old names
(``services.cli.stores.OLD_GLOBAL`` and ``OLD_GAME``): ``souk store migrate`` renames their keys to these.
"""

from __future__ import annotations

import zlib

ENGINE_GROUP = "engine"
PROJECTOR_GROUP = "projector"
CLOCK_GROUP = "clock"  # the clock workers' leases (no consumer group: a partition is its deadline index)
PARKED = "souk:parked"  # stream: commands the engine could not decide nor answer normally (for operators)


def projector_group(index: int, count: int) -> str:
    """The consumer group of projector partition ``index`` of ``count``: each partition reads every event and
    projects its own games (``services.projector.service.Partition``). One partition keeps the plain name."""
    return PROJECTOR_GROUP if count == 1 else f"{PROJECTOR_GROUP}:{index}/{count}"


# The event store's partitions. Their number P is fixed when the store is created and recorded in its role hash
# (``services.cli.stores``: field ``partitions``); a service sets it here (``use``) from the store before it runs.
PARTITIONS: tuple[int, ...] = (0,)
MAX_PARTITIONS = 1024  # more than a Redis Cluster would ever have primaries; each partition costs a few keys


class PartitionsError(ValueError):
    """A number of partitions that is not one (``code``: ``bad_partitions``)."""

    code = "bad_partitions"


def checked(partitions: object) -> int:
    """``partitions`` as a number of partitions: an integer from 1 to ``MAX_PARTITIONS`` (PartitionsError)."""
    try:
        count = int(str(partitions).strip())
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_PARTITIONS:
        raise PartitionsError(f"bad_partitions: the partitions must be an integer from 1 to {MAX_PARTITIONS}, "
                              f"not {partitions!r}")
    return count


def use(partitions: int) -> None:
    """The number of partitions of the event store this process uses (read from its role hash)."""
    global PARTITIONS
    PARTITIONS = tuple(range(checked(partitions)))


def partition(game_id: str) -> int:
    """The partition a game's keys belong to: CRC-32 of its id modulo P, the same in every process and every
    release (Python's ``hash`` of a string changes with each process)."""
    count = len(PARTITIONS)
    return 0 if count == 1 else zlib.crc32(game_id.encode()) % count


def tag(partition: int) -> str:
    """The hash tag of ``partition``'s keys: ``{p3}``. Redis Cluster hashes only the tag, so every key of a
    partition (its streams, indexes and games' keys) lives in one slot, and one script may touch them all."""
    if partition not in PARTITIONS:
        raise ValueError(f"no partition {partition}: the partitions are 0 to {len(PARTITIONS) - 1}")
    return f"{{p{partition}}}"


def _game(game_id: str) -> str:
    return f"souk:{tag(partition(game_id))}"


def commands(partition: int) -> str:
    """Stream of CommandEnvelope of the partition's games: the gateway queues a command on its game's."""
    return f"souk:{tag(partition)}:commands"


def events(partition: int) -> str:
    """Stream of the partition's games' events, in commit order (the projectors and webhook workers read every
    partition's)."""
    return f"souk:{tag(partition)}:events"


def games(partition: int) -> str:
    """Sorted set: game id -> creation time, of the partition's games (every game ever created in it)."""
    return f"souk:{tag(partition)}:games"


def refusals(partition: int) -> str:
    """Sorted set: '{game}\\n{command key}' -> when the refusal's outcome is forgotten, of the partition's games."""
    return f"souk:{tag(partition)}:refusals"


def deadlines(partition: int) -> str:
    """Sorted set: game id -> the instant (unix seconds) something of the game falls due next
    (``domain.table.next_due``: a seat's deadline, a game timer, a bot's move), of the partition's games. The engine
    writes it with each append, in the append's script; the clock worker (``services.clock``) reads the due games."""
    return f"souk:{tag(partition)}:deadlines"


def game_deadlines(game_id: str) -> str:
    """The deadline index that holds ``game_id`` (its partition's): the key the game's appends write its next due
    instant to, beside its other keys."""
    return deadlines(partition(game_id))


TOKEN_SECRET = "souk:secret:tokens"  # the platform's secret behind the tokens of joins with a request id


def request(digest: str) -> str:
    """A create request id's game id (by the id's digest), kept a week: a resend answers the same game."""
    return f"souk:request:{digest}"


def game_stream(game_id: str) -> str:
    return f"{_game(game_id)}:game:{game_id}"


def game_streams(partition: int) -> str:
    """The pattern of the partition's game streams' names (SCAN MATCH); a name's game id follows its last ':'."""
    return f"souk:{tag(partition)}:game:*"


def outcomes(game_id: str) -> str:
    """Hash: '{seat}:{command_id}' -> Reply JSON (idempotency: a command id seen before gets the same answer)."""
    return f"{_game(game_id)}:outcomes:{game_id}"


def outcome_order(game_id: str) -> str:
    """List: the command keys of the game's latest accepted outcomes kept in ``outcomes``, oldest first (at most
    ``SOUK_OUTCOME_WINDOW``: an older one goes; the engine answers its resend from the game stream)."""
    return f"{_game(game_id)}:outcomes:order:{game_id}"


def head(game_id: str) -> str:
    """The hash of the game's last event: appends are guarded by it as well as by the version."""
    return f"{_game(game_id)}:head:{game_id}"


def engine_snapshot(game_id: str) -> str:
    """The engine's latest snapshot of a game in play (``services.engine.snapshots``): its cold load folds only the
    events after it. A cache, in the event store; deleted when the game ends."""
    return f"{_game(game_id)}:engine:snapshot:{game_id}"


def seed(game_id: str) -> str:
    return f"{_game(game_id)}:seed:{game_id}"


def order(game_id: str) -> str:
    """Hash: seat -> the ``commands`` entry id of the seat's newest applied command, written with its events
    (the engine refuses a command of the seat received before it: ``superseded``)."""
    return f"{_game(game_id)}:order:{game_id}"


def webhooks(game_id: str) -> str:
    """Hash: the game's webhook registrations (``services.webhooks``): field ``game`` (made at creation: every
    seat's notices) and ``seat:{token hash}`` (made at a join: that seat's), each a Registration JSON (URL and
    secret). Not in the event log: the history and records would show the URLs and the secrets."""
    return f"{_game(game_id)}:webhooks:{game_id}"


def webhook_position(game_id: str) -> str:
    """The last event seq whose webhook notices are in the outbox, written with them (a redelivered event adds
    nothing: the tracking record of ``services.webhooks.worker``)."""
    return f"{_game(game_id)}:webhooks:position:{game_id}"


# The webhooks' outbox, one per partition like its command stream (``services.webhooks.outbox``): its enqueue script
# writes a game's webhook position with it.
WEBHOOKS_GROUP = "webhooks"  # the webhook worker's consumer group on each partition's ``events``


def webhook_outbox(partition: int) -> str:
    """Sorted set: delivery id -> when it is next tried (unix seconds), of the partition's games."""
    return f"souk:{tag(partition)}:webhooks:outbox"


def webhook_deliveries(partition: int) -> str:
    """Hash: delivery id -> Delivery JSON (the notice, attempts so far), of the partition's games."""
    return f"souk:{tag(partition)}:webhooks:deliveries"


def webhook_dead(partition: int) -> str:
    """Stream: the partition's deliveries given up on (for operators), with their last error."""
    return f"souk:{tag(partition)}:webhooks:dead"


def lease(group: str, partition: int) -> str:
    """String: the consumer of ``group`` that owns the partition's stream now, with an expiry (``services.store.
    leases``); in the partition's slot."""
    return f"souk:{tag(partition)}:lease:{group}"


def members(group: str) -> str:
    """Sorted set: the live consumers of ``group`` that share the partitions, scored by when their heartbeat
    expires (ms since the epoch). Global: no script touches it with a game's keys."""
    return f"souk:members:{group}"


# Every key of one partition that is not one game's, and every key of one game in the event store, as the
# functions that name them (``souk store migrate`` maps a store's keys to another number of partitions with them).
PARTITION_KEYS = (commands, events, games, refusals, deadlines, webhook_outbox, webhook_deliveries, webhook_dead)
GAME_KEYS = (game_stream, outcomes, outcome_order, head, seed, order, engine_snapshot, webhooks, webhook_position)


def game_keys(game_id: str) -> tuple[str, ...]:
    """Every key of one game in the event store (``souk archive`` removes them all)."""
    return tuple(key(game_id) for key in GAME_KEYS)


# The read store (SOUK_VIEWS_REDIS_URL) is partitioned as the event store is, with the same P: a game's read models
# carry its partition's hash tag, and so does the lobby, one per partition (its hash and its indexes), which the
# projector's script writes with the game's read models (all in one slot) and the gateway reads all P of and merges
# (``services.gateway.lobby``). The pub/sub channels (``view_updates``, ``view_pushes``, ``presence_updates``) are
# no keys: they keep their names.


def _read(game_id: str) -> str:
    return f"souk:{tag(partition(game_id))}"


def views(game_id: str) -> str:
    """Hash: audience (seat number, or 'spectator') -> TableView JSON."""
    return f"{_read(game_id)}:views:{game_id}"


def audience(seat: int | None) -> str:
    return "spectator" if seat is None else str(seat)


def history(game_id: str) -> str:
    """List of HistoryRecord JSON, one per event in order (index = seq - 1)."""
    return f"{_read(game_id)}:history:{game_id}"


def position(game_id: str) -> str:
    """The last event seq projected for the game (written with its read models, in one transaction)."""
    return f"{_read(game_id)}:position:{game_id}"


def snapshots(game_id: str) -> str:
    """Sorted set: version -> '{version}:' + the table at that version (a cache for time travel,
    ``services.history.travel``)."""
    return f"{_read(game_id)}:snapshots:{game_id}"


def undone(game_id: str) -> str:
    """Sorted set: every undo's range, ``{first}:{last}:{by_seat}`` scored by ``last`` (the history marks the
    entries inside one ``undone``; a view shows only the latest)."""
    return f"{_read(game_id)}:undone:{game_id}"


def presence(game_id: str) -> str:
    """Hash in the read store: which of the game's seats are connected, and since when (written by the gateways:
    ``services.gateway.presence``; a lease per gateway holding a seat's socket, a window after a request)."""
    return f"{_read(game_id)}:presence:{game_id}"


def presence_updates(game_id: str) -> str:
    """Pub/sub channel: a seat of the game connected or left (the message: the seat); gateways push the views
    again with the new presence."""
    return f"souk:presence:updates:{game_id}"


def seat_tokens(game_id: str) -> str:
    """Hash: seat -> sha256 of its token (private read model: the gateway checks tokens against it)."""
    return f"{_read(game_id)}:seats:{game_id}"


def read_model_keys(game_id: str) -> tuple[str, ...]:
    """Every key of one game in the read store (``souk archive`` removes them all, with its lobby entries)."""
    return (views(game_id), history(game_id), position(game_id), seat_tokens(game_id), snapshots(game_id),
            undone(game_id), presence(game_id))


# Set once the read store holds every game's read models. Its version goes up when the read models gain a key
# that older projectors did not write, or change shape (2: the lobby's indexes; 3: ``unfair`` replaced
# ``seed_chosen`` in the lobby and the views; 4: every undo's range in ``undone``, the views keeping only the
# latest; 5: the keys carry their partition's hash tag, the lobby one per partition): a projector then finds no
# mark and rebuilds (and drops the keys of the layout before partitions: ``OLD_READ_MODELS``).
READ_STORE_MARK = "souk:projection:initialised:5"
LOBBY_STATUSES = ("open", "playing", "over", "cancelled")


def lobby(partition: int) -> str:
    """Hash: game id -> LobbyEntry JSON, of the partition's games."""
    return f"souk:{tag(partition)}:lobby"


def game_lobby(game_id: str) -> str:
    """The lobby hash that holds ``game_id``'s entry (its partition's)."""
    return lobby(partition(game_id))


def lobby_index(partition: int, status: str | None = None, game: str | None = None) -> str:
    """Sorted set: game id -> creation time, of the partition's listed games with this status and/or game (neither:
    every listed game of the partition)."""
    if status is None and game is None:
        return f"souk:{tag(partition)}:lobby:order"
    return f"souk:{tag(partition)}:lobby:by:{status or '*'}:{game or '*'}"


# The read store's keys before partitions (read stores marked 4 or less): SCAN patterns of what a rebuild drops
# (``services.projector.service.drop_old_read_models``): a game's read models and the lobby, and the gateway's
# counters (the rate limits' and the clients' open games, ``services.gateway.limits``).
OLD_READ_MODELS = ("souk:views:*", "souk:history:*", "souk:position:*", "souk:snapshots:*", "souk:undone:*",
                   "souk:seats:*", "souk:presence:*", "souk:lobby", "souk:lobby:*", "souk:rate:*",
                   "souk:client-games:*", "souk:projection:initialised", "souk:projection:initialised:[2-4]")


def client_rate(client: str) -> str:
    """The GCRA state of a client's request rate (``services.gateway.limits``): in the client's own slot."""
    return f"souk:{{c:{client}}}:rate"


def client_games(client: str) -> str:
    """Sorted set: the games a client created that may still wait for players (id -> when its place was taken),
    beside its rate (the same hash tag)."""
    return f"souk:{{c:{client}}}:games"


def token_rate(digest: str) -> str:
    """The GCRA state of a seat token's request rate, by the token's digest: in the token's own slot."""
    return f"souk:{{t:{digest}}}:rate"


def view_updates(game_id: str) -> str:
    """Pub/sub channel: the projector announces each new version of a game's views."""
    return f"souk:updates:{game_id}"


def view_pushes(game_id: str) -> str:
    """Pub/sub channels ``souk:pushes:{game}:{version}:{audience}``: each audience's view of each new version of a
    game, for the gateway (``services.store.pushes``). With "*": the pattern of them all."""
    return f"souk:pushes:{game_id}"


def replies(gateway_id: str) -> str:
    return f"souk:replies:{gateway_id}"

ARCHIVED = "souk:archived"  # hash in the event store: game id -> Tombstone JSON of a game `souk archive` removed
