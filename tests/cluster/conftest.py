"""A real local Redis Cluster for the tests (issue #22): six redis-servers in cluster mode, three primaries and a
replica each, on free ports in a temporary folder (never 127.0.0.1:6379), joined by ``redis-cli --cluster create``
(services/embedded/cluster.py). Torn down at the end: every process killed, the folder removed.

- ``redis_cluster``: one cluster for a test module, for tests that read and write but leave the nodes alone.
- ``fresh_redis_cluster``: a cluster of the test's own, for a test that kills or restarts nodes
  (``cluster.fail_over(primary)``, ``cluster.restart(node)``) or adds one (``cluster.add_primary()``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.embedded.cluster import LocalCluster


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as cluster:
        yield cluster


@pytest.fixture
def fresh_redis_cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as cluster:
        yield cluster
