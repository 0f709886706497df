"""The one place that makes Redis clients from a store's URL: one Redis, or a Redis Cluster (issue #22).

A store's URL says which: ``redis://``, ``rediss://`` and ``unix://`` are one Redis; ``redis+cluster://HOST:PORT``
(``rediss+cluster://`` with TLS) is a Redis Cluster, named by one or more of its nodes
(``redis+cluster://user:secret@10.0.0.1:6379,10.0.0.2:6379``): the clients learn the rest of the cluster from the
first that answers. A cluster has no databases, so a path other than ``/`` or ``/0`` is refused
(``bad_cluster_url``), as is a cluster URL without a node.

- ``async_client``: redis-py's ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``;
- ``sync_client``: the same in redis-py's blocking flavour (the CLI's store checks);
- ``broker``: FastStream's ``RedisBroker`` or ``RedisClusterBroker``;
- ``lean``: the hot paths' auto-pipelined connection (``services.store.resp``: ``Resp``, or ``ClusterResp``,
  which routes each command to the primary serving its key's slot);
- ``node_url``: ``redis://`` of one node (the first named), for what speaks to one server.

Everything else takes the client it is given, and works alike on both (``is_cluster_client`` where it cannot).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

# redis-py is imported by the functions that make clients: the settings parse URLs with this module, and `souk
# --help` imports no server code (tests/cli/test_main.py).

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


class ClusterUrlError(ValueError):
    """A cluster URL that names no node, a database, or a port that is not one (``code``: ``bad_cluster_url``)."""

    code = "bad_cluster_url"


def is_cluster(url: str | None) -> bool:
    return bool(url) and url.split("://", 1)[0].lower() in CLUSTER_SCHEMES


def is_cluster_client(client: Any) -> bool:
    from redis.asyncio.cluster import RedisCluster
    from redis.cluster import RedisCluster as SyncRedisCluster

    return isinstance(client, (RedisCluster, SyncRedisCluster))


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The (host, port) of the nodes a cluster URL names, and the connection options it carries (``username``,
    ``password``, ``ssl``). ClusterUrlError when it names none, a database, or a bad port."""
    scheme, rest = url.split("://", 1)
    if scheme.lower() not in CLUSTER_SCHEMES:
        raise ClusterUrlError(f"bad_cluster_url: {scheme}:// is not a cluster URL (redis+cluster://HOST:PORT)")
    credentials, _, hosts = rest.split("/", 1)[0].rpartition("@")
    path = "/" + rest.split("/", 1)[1].split("?", 1)[0] if "/" in rest else ""
    if path not in ("", "/", "/0"):
        raise ClusterUrlError(f"bad_cluster_url: a Redis Cluster has one database, 0; not {path!r}")
    nodes = []
    for part in filter(None, hosts.split(",")):
        host, _, port = part.rpartition(":") if ":" in part else (part, "", "6379")
        host = host.strip("[]")
        if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ClusterUrlError(f"bad_cluster_url: {part!r} is not HOST:PORT")
        nodes.append((host, int(port)))
    if not nodes:
        raise ClusterUrlError("bad_cluster_url: a cluster URL names at least one node, redis+cluster://HOST:PORT")
    options: dict[str, Any] = {}
    if credentials:
        user, _, password = credentials.partition(":")
        if password:
            options["password"] = unquote(password)
            if user:
                options["username"] = unquote(user)
        elif user:
            options["password"] = unquote(user)
    if scheme.lower().startswith("rediss"):
        options["ssl"] = True
    return nodes, options


def node_url(url: str) -> str:
    """The URL of one server: a plain URL as it is; a cluster URL's first node, as ``redis://``."""
    if not is_cluster(url):
        return url
    (host, port), *_ = cluster_nodes(url)[0]
    scheme = CLUSTER_SCHEMES[url.split("://", 1)[0].lower()]
    credentials = urlsplit(f"{scheme}://{url.split('://', 1)[1].split(',', 1)[0]}").netloc.rpartition("@")[0]
    return f"{scheme}://{credentials + '@' if credentials else ''}{host}:{port}"


def async_client(url: str, **options: Any) -> Any:
    """redis-py's asyncio client of the store at ``url`` (``options``: redis-py's, such as ``socket_timeout``):
    ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``."""
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import ClusterNode, RedisCluster

    if not is_cluster(url):
        return aioredis.Redis.from_url(url, **options)
    _follow_asks()
    nodes, common = cluster_nodes(url)
    options.pop("retry", None)  # the cluster client retries by itself, re-learning the slots
    options.pop("single_connection_client", None)
    return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in nodes], **common, **options)


def sync_client(url: str, **options: Any) -> Any:
    """redis-py's blocking client of the store at ``url``: ``redis.Redis`` or ``redis.cluster.RedisCluster``."""
    import redis
    from redis.cluster import ClusterNode as SyncClusterNode
    from redis.cluster import RedisCluster as SyncRedisCluster

    if not is_cluster(url):
        return redis.Redis.from_url(url, **options)
    nodes, common = cluster_nodes(url)
    return SyncRedisCluster(startup_nodes=[SyncClusterNode(h, p) for h, p in nodes], **common, **options)


def broker(url: str, **options: Any) -> Any:
    """FastStream's broker on the store at ``url``: ``RedisClusterBroker`` on a cluster (it is given the first
    node; redis-py's cluster client under it learns the rest)."""
    if not is_cluster(url):
        from faststream.redis import RedisBroker

        return RedisBroker(url, **options)
    from faststream.redis import RedisClusterBroker

    _follow_asks()
    return RedisClusterBroker(node_url(url), **options)


def _follow_asks() -> None:
    """redis-py's asyncio cluster client follows an ``ASK`` (a slot being migrated, the key already on the new
    owner) by sending ``ASKING`` to the new owner, then the command. Two defects of it, mended here once, on its
    classes (FastStream's ``RedisClusterBroker`` uses them too), made the clock worker's, the webhook worker's and
    the gateway's redis-py calls fail during a reshard:

    - ``ASKING`` and the command are two commands, each taking a connection from the node's pool, which gave out
      the connection idle longest (released ones go to the back): with several idle connections to that node the
      command went on another connection than its ``ASKING``, was answered ``MOVED`` back to the old owner, which
      answered ``ASK`` again, until ``TTL exhausted``. A connection released is now the next one given out, and
      nothing runs between the two (no await): the command takes its ``ASKING``'s connection.
    - an ``ASK`` to a node the client has not met (a primary just added, which owns no slot yet) found no node in
      its cache and failed ``AttributeError`` (not a Redis error: the clock worker's loop ended). Within a command's
      execution, a node asked for by name and not known is now added to the cache, as a ``MOVED`` to a new node
      adds it; elsewhere (``set_default_node``, pub/sub) an unknown node is still None."""
    import contextvars

    from redis.asyncio.cluster import ClusterNode, RedisCluster
    from redis.cluster import PRIMARY

    if getattr(ClusterNode.release, "souk_follows_asks", False):
        return
    if not hasattr(RedisCluster, "_execute_command"):
        return  # not the redis-py these mend (8.x): left as it is (tests/cluster/test_cluster_clients.py shows it)
    release = ClusterNode.release
    execute = RedisCluster._execute_command
    get_node = RedisCluster.get_node
    executing: contextvars.ContextVar[bool] = contextvars.ContextVar("souk_executing", default=False)

    def release_to_the_front(self: Any, connection: Any) -> None:
        release(self, connection)
        free = getattr(self, "_free", None)  # a deque in redis-py 8 (popleft gives out, append takes back)
        if free and free[-1] is connection:  # back in the free queue (not being reconnected): given out next
            free.pop()
            free.appendleft(connection)

    async def execute_command(self: Any, target_node: Any, *args: Any, **kwargs: Any) -> Any:
        token = executing.set(True)
        try:
            return await execute(self, target_node, *args, **kwargs)
        finally:
            executing.reset(token)

    def get_or_meet_node(self: Any, host: str | None = None, port: int | None = None,
                         node_name: str | None = None) -> Any:
        node = get_node(self, host, port, node_name)
        if node is None and node_name and host is None and port is None and executing.get():
            # the target of an ASK (``_execute_command`` looks it up by name): a node not met yet
            name_host, _, name_port = node_name.rpartition(":")
            manager = self.nodes_manager
            node = ClusterNode(name_host, int(name_port), PRIMARY, **manager.connection_kwargs)
            manager.set_nodes(manager.nodes_cache, {node.name: node})
        return node

    release_to_the_front.souk_follows_asks = True  # type: ignore[attr-defined]
    ClusterNode.release = release_to_the_front  # type: ignore[method-assign]
    RedisCluster._execute_command = execute_command  # type: ignore[method-assign]
    RedisCluster.get_node = get_or_meet_node  # type: ignore[method-assign]


def lean(url_or_client: Any) -> Any:
    """The hot paths' lean connection to a store (``services.store.resp``): ``Resp`` on one Redis, ``ClusterResp``
    on a cluster. Given a URL or a redis-py client."""
    from services.store.resp import ClusterResp, Resp

    if isinstance(url_or_client, str):
        if is_cluster(url_or_client):
            nodes, common = cluster_nodes(url_or_client)
            return ClusterResp(nodes, **common)
        return Resp(url_or_client)
    return Resp.like(url_or_client)


def subscriber(url: str, on_message: Any) -> Any:
    """A pub/sub ``Subscriber`` (``services.store.resp``) on the store at ``url``: on a cluster, on the first of its
    named nodes that answers (a PUBLISH reaches every node)."""
    from services.store.resp import Subscriber

    if not is_cluster(url):
        return Subscriber(url, on_message)
    nodes, common = cluster_nodes(url)
    made = Subscriber(None, on_message, host=nodes[0][0], port=nodes[0][1], **common)
    made.candidates = [{"host": h, "port": p, **common} for h, p in nodes]
    return made
