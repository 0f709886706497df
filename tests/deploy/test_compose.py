"""docker-compose.yml (issue #9 item 10), without a Docker daemon: one image built once and named, a healthcheck
on every service, Souk started once both stores are healthy, the gateway published where an operator expects,
stable consumer names, commands the CLI has.

Each structural check runs on the file as read here (YAML anchors and merge keys, `${VAR:-default}`), and again on
what `docker compose config` (or docker-compose 1.x's `docker-compose config`) resolves, where one is installed
(.ci/run installs docker-compose): only that second half is skipped without it."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from services.runtime.config import Settings
from tests.deploy.support import (
    REDIS_SERVICES,
    ROOT,
    SOUK_SERVICES,
    dockerfile_stages,
    env_of,
    environment,
    load_compose,
    published_ports,
    seconds,
    souk_help,
)

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
PROBE = ["CMD", "python", "/opt/souk/healthcheck.py"]
IMAGE_ENV = env_of(dockerfile_stages()[1][-1])  # what the image sets, under what a service sets
PUBLISH = {"SOUK_PUBLISH": "0.0.0.0:8080", "SOUK_IMAGE": "registry.example/souk:test"}


def compose_binary() -> list[str] | None:
    """`docker compose` (v2, a plugin of the docker CLI) or `docker-compose` (1.x), whichever is installed."""
    if shutil.which("docker"):
        try:
            plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=20)
        except subprocess.TimeoutExpired:
            plugin = None
        if plugin is not None and plugin.returncode == 0:
            return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


CLUSTER = {"COMPOSE_PROFILES": "cluster"}  # the cluster profile's services too (Compose v2 leaves them out without it)
CLUSTER_NODES = tuple(f"redis-cluster-{i}" for i in range(1, 7))


def resolve_with_binary(binary: list[str], env: dict[str, str]) -> subprocess.Popen:
    clean = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"), **env}
    return subprocess.Popen([*binary, "--project-directory", str(ROOT), "-f", str(ROOT / "docker-compose.yml"),
                             "config"], cwd=ROOT, env=clean, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.fixture(scope="module", params=["read in Python", "docker compose config"])
def resolved(request) -> dict[str, dict]:
    """The compose file resolved with no variable set, with SOUK_PUBLISH and SOUK_IMAGE set, and with the cluster
    profile on."""
    if request.param == "read in Python":
        return {"defaults": load_compose({}), "set": load_compose(PUBLISH), "cluster": load_compose(CLUSTER)}
    binary = compose_binary()
    if binary is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed (.ci/run installs docker-compose); "
                    "the file was checked in Python only")
    runs = {"defaults": resolve_with_binary(binary, {}), "set": resolve_with_binary(binary, PUBLISH),
            "cluster": resolve_with_binary(binary, CLUSTER)}
    out = {}
    for name, run in runs.items():
        stdout, stderr = run.communicate(timeout=60)
        assert run.returncode == 0, f"{' '.join(binary)} config: {stderr}"
        out[name] = yaml.safe_load(stdout)
    return out


def services(config: dict) -> dict[str, dict]:
    """The services `docker compose up` starts: those of no profile."""
    return {name: service for name, service in config["services"].items() if not service.get("profiles")}


def cluster_services(config: dict) -> dict[str, dict]:
    return {name: service for name, service in config["services"].items() if "cluster" in service.get("profiles", [])}


def test_the_stack_is_the_two_stores_and_the_four_roles(resolved):
    assert set(services(resolved["defaults"])) == {*REDIS_SERVICES, *SOUK_SERVICES}
    assert set(resolved["defaults"]["services"]) <= {*REDIS_SERVICES, *SOUK_SERVICES, *CLUSTER_NODES,
                                                     "redis-cluster-init", "souk-cluster"}
    assert set(cluster_services(resolved["cluster"])) == {*CLUSTER_NODES, "redis-cluster-init", "souk-cluster"}


def test_the_four_roles_run_one_image_named_with_the_projects_version(resolved):
    for env, expected in (("defaults", f"souk:{VERSION}"), ("set", PUBLISH["SOUK_IMAGE"])):
        souk = [services(resolved[env])[name] for name in SOUK_SERVICES]
        assert {s.get("image") for s in souk} == {expected}
    builds = [s["build"] for s in map(services(resolved["defaults"]).get, SOUK_SERVICES) if "build" in s]
    assert builds, "no service builds the image"
    assert all(b == builds[0] for b in builds), "one build shared under one image name is built once"
    assert Path(ROOT, builds[0]["context"]).resolve() == ROOT
    assert builds[0]["dockerfile"] == "deploy/Dockerfile"
    assert not [name for name in REDIS_SERVICES if "build" in services(resolved["defaults"])[name]]


def test_every_service_has_a_healthcheck_on_what_it_serves(resolved):
    config = services(resolved["defaults"])
    for name in REDIS_SERVICES:
        test = config[name]["healthcheck"]["test"]
        assert test[0] == "CMD-SHELL" and "redis-cli ping" in test[1] and "PONG" in test[1], test
    for name in SOUK_SERVICES:
        env = {**IMAGE_ENV, **environment(config[name])}
        check = config[name]["healthcheck"]
        assert check["test"][:3] == PROBE, check["test"]
        if name == "gateway":
            assert check["test"][3:] == [f"http://127.0.0.1:{env['SOUK_PORT']}/health"]
        else:
            assert check["test"][3:] == [f"http://127.0.0.1:{env['SOUK_METRICS_PORT']}/metrics"], \
                f"{name} serves /metrics on SOUK_METRICS_PORT and nothing else"
    for name, service in config.items():
        check = service["healthcheck"]
        assert not check.get("disable")
        assert 0 < seconds(check["timeout"]) <= seconds(check["interval"]) <= 30 and int(check["retries"]) >= 3, name


def test_souk_starts_once_both_stores_are_healthy(resolved):
    for name in SOUK_SERVICES:
        depends = services(resolved["defaults"])[name]["depends_on"]
        assert {store: depends[store]["condition"] for store in REDIS_SERVICES} == \
            {store: "service_healthy" for store in REDIS_SERVICES}, name


def test_the_gateway_is_published_on_the_hosts_loopback_unless_told_otherwise(resolved):
    gateway = services(resolved["defaults"])["gateway"]
    env = {**IMAGE_ENV, **environment(gateway)}
    assert env["SOUK_HOST"] == "0.0.0.0", "inside the container, every interface: the published port reaches it"
    assert published_ports(gateway) == [("127.0.0.1", "8000", env["SOUK_PORT"])]
    assert published_ports(services(resolved["set"])["gateway"]) == [("0.0.0.0", "8080", env["SOUK_PORT"])]
    others = [name for name in (*REDIS_SERVICES, "engine", "projector", "clock", "webhooks")
              if services(resolved["defaults"])[name].get("ports")]
    assert others == [], "the stores and the workers are reached on the Compose network only"


def test_each_worker_keeps_one_consumer_name_across_restarts(resolved, monkeypatch):
    """The default name, hostname-pid, changes with every recreated container (a new id as hostname, pid 1)."""
    for name in ("engine", "projector", "webhooks"):
        env = environment(services(resolved["defaults"])[name])
        assert env.get("SOUK_CONSUMER") and "$" not in env["SOUK_CONSUMER"], f"{name} sets no SOUK_CONSUMER"
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        names = set()
        for hostname in ("0f3c2a1b9d8e", "7a6b5c4d3e2f"):  # two lives of the container, pid 1 in both
            monkeypatch.setattr("socket.gethostname", lambda hostname=hostname: hostname)
            monkeypatch.setattr("os.getpid", lambda: 1)
            names.add(Settings.from_env().consumer)
        assert names == {env["SOUK_CONSUMER"]}, name


def test_every_souk_setting_in_the_file_is_one_souk_reads(resolved):
    """A misspelt variable (SOUK_METRIC_PORT) would be ignored without a word, and its healthcheck fail."""
    read = inspect.getsource(inspect.getmodule(Settings))
    for name in SOUK_SERVICES:
        for key in environment(services(resolved["defaults"])[name]):
            assert f'"{key}"' in read, f"{name}: {key} is not a setting (services/runtime/config.py)"


def test_the_redis_configurations_and_volumes_it_mounts_exist(resolved):
    config = resolved["defaults"]
    for name in REDIS_SERVICES:
        for volume in services(config)[name].get("volumes", []):
            source = volume["source"] if isinstance(volume, dict) else volume.split(":")[0]
            if source.startswith((".", "/")):
                assert Path(ROOT, source).resolve().is_file(), f"{name} mounts {source}, which does not exist"
            else:
                assert source in (config.get("volumes") or {}), f"{name}: volume {source} is not declared"


def test_the_cluster_profile_is_six_redis_nodes_in_cluster_mode_and_one_that_joins_them(resolved):
    config = resolved["cluster"]
    cluster = cluster_services(config)
    for name in CLUSTER_NODES:
        node = cluster[name]
        command = node["command"]
        assert command[0] == "redis-server" and command[command.index("--cluster-enabled") + 1] == "yes", name
        assert command[command.index("--appendfsync") + 1] == "always", f"{name}: an acknowledged write is on disk"
        assert command[command.index("--maxmemory-policy") + 1] == "noeviction", name
        test = node["healthcheck"]["test"]
        assert test[0] == "CMD-SHELL" and "redis-cli ping" in test[1] and "PONG" in test[1], name
        (volume,) = node["volumes"]
        source = volume["source"] if isinstance(volume, dict) else volume.split(":")[0]
        assert source in (config.get("volumes") or {}), f"{name}: volume {source} is not declared"
        assert not node.get("ports"), f"{name}: reached on the Compose network only"
    assert len({str(cluster[name]["volumes"]) for name in CLUSTER_NODES}) == 6, "a volume each"
    init = cluster["redis-cluster-init"]
    assert {node: init["depends_on"][node]["condition"] for node in CLUSTER_NODES} == \
        {node: "service_healthy" for node in CLUSTER_NODES}
    assert str(init["restart"]) == "no" and "healthcheck" not in init, "a one-shot service"
    assert environment(init)["NODES"].split() == [f"{node}:6379" for node in CLUSTER_NODES]
    script = init["command"][-1]
    assert "redis-cli --cluster create" in script and "--cluster-replicas 1 --cluster-yes" in script


def test_the_stack_keeps_its_two_stores_and_souk_cluster_serves_on_the_cluster(resolved):
    """The four roles speak to the two stores of the stack; the cluster profile's souk-cluster runs `souk serve`
    with both stores on the cluster (URLs Souk's settings parse as a cluster's, naming nodes of the profile), once
    the cluster is joined, with a healthcheck on its /health and its port on the host's loopback."""
    config = services(resolved["cluster"])
    for name in SOUK_SERVICES:
        assert not set(config[name].get("depends_on") or {}) & {*CLUSTER_NODES, "redis-cluster-init"}, name
        env = environment(config[name])
        assert [env["REDIS_URL"], env["SOUK_VIEWS_REDIS_URL"]] == ["redis://redis:6379/0",
                                                                  "redis://redis-views:6379/0"], name
    from services.store.clients import cluster_nodes

    souk = cluster_services(resolved["cluster"])["souk-cluster"]
    assert souk["command"] == ["souk", "serve"]
    assert set(souk["depends_on"]) == {"redis-cluster-init"}
    assert souk["depends_on"]["redis-cluster-init"]["condition"] == "service_completed_successfully"
    env = environment(souk)
    for url in (env["REDIS_URL"], env["SOUK_VIEWS_REDIS_URL"]):
        nodes, _ = cluster_nodes(url)
        assert len(nodes) == 3 and {host for host, _ in nodes} <= set(CLUSTER_NODES), url
    assert int(env["SOUK_PARTITIONS"]) >= 3  # at least the primaries
    assert souk["healthcheck"]["test"] == [*PROBE, f"http://127.0.0.1:{env['SOUK_PORT']}/health"]
    assert published_ports(souk) == [("127.0.0.1", "8001", "8000")]


@pytest.mark.cluster
def test_the_cluster_profiles_script_joins_six_nodes_and_leaves_a_joined_cluster_alone(tmp_path):
    """redis-cluster-init's script as Compose runs it (``$$`` is ``$``), against six local nodes: NODES names them
    (``localhost:PORT``, looked up with getent as the service looks up ``redis-cluster-1``)."""
    from services.embedded.cluster import LocalCluster

    init = load_compose(CLUSTER)["services"]["redis-cluster-init"]
    assert init["command"][:2] == ["sh", "-euc"]
    cluster = LocalCluster(tmp_path / "cluster").launch()
    try:
        env = {"PATH": f"{Path(cluster.cli).parent}:{os.environ['PATH']}",
               "NODES": " ".join(f"localhost:{node.port}" for node in cluster.nodes)}
        first = subprocess.run(init["command"], env=env, capture_output=True, text=True, timeout=60)
        assert first.returncode == 0, first.stdout[-1500:] + first.stderr[-1500:]
        cluster.wait_ready(30, replicas=1)
        assert len(cluster.primaries()) == 3
        again = subprocess.run(init["command"], env=env, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0 and "the cluster exists already" in again.stdout, again.stderr[-1500:]
    finally:
        cluster.stop()


def test_every_command_in_the_file_is_a_souk_command():
    """`souk engine`, `souk projector`, `souk clock`, `souk webhooks`, `souk gateway` as the file writes them,
    options included, parse."""
    commands = {tuple(load_compose({})["services"][name]["command"]) for name in SOUK_SERVICES}
    assert {c[:2] for c in commands} == {("souk", "engine"), ("souk", "projector"), ("souk", "clock"),
                                         ("souk", "webhooks"),
                                         ("souk", "gateway")}
    for command, run in souk_help(*commands).items():
        assert run.returncode == 0 and run.stdout, f"`{' '.join(command)}`: {run.stderr[-500:]}"
