"""deploy/k8s (issue #22): every manifest valid against the Kubernetes API's schemas (kubernetes-validate, strict:
an unknown or misspelt field is an error), and Souk's own rules: each role a Deployment running a command the CLI
has, with probes on what the role serves, requests and limits, the image's user; selectors that select their own
pods and only those; the PodDisruptionBudgets on Deployments that can lose a pod; settings Souk reads, from a
ConfigMap and a Secret that exist; the stores on a Redis Cluster named (ExternalName), not deployed, with the
partitions to create the event store with; and the migration Job of a one-Redis store onto it, apart (deploy/k8s/
migrate: not applied with the rest, it runs with Souk's services stopped)."""

from __future__ import annotations

import copy
import inspect
import re
import tomllib
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from services.runtime.config import Settings
from services.store import clients, keys
from tests.deploy.support import ROOT, dockerfile_stages, souk_help

K8S = ROOT / "deploy" / "k8s"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The oldest Kubernetes release still maintained when these were written, and the newest the package knows.
KUBERNETES = ("1.31.0", kubernetes_validate.latest_version())
ROLES = ("engine", "projector", "clock", "webhooks", "gateway")


def load(folder: Path = K8S) -> list[tuple[Path, dict]]:
    return [(path, doc) for path in sorted(folder.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


MANIFESTS = load()
MIGRATE = load(K8S / "migrate")  # `kubectl apply -f deploy/k8s/` does not descend into it


def of_kind(kind: str) -> list[dict]:
    return [doc for _, doc in MANIFESTS if doc["kind"] == kind]


def deployments() -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in of_kind("Deployment")}


def container(deployment: dict) -> dict:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def selects(selector: dict, labels: dict) -> bool:
    assert set(selector) == {"matchLabels"}, "only matchLabels are read here"
    return selector["matchLabels"].items() <= labels.items()


def pod_labels(deployment: dict) -> dict:
    return deployment["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("version", KUBERNETES)
@pytest.mark.parametrize("path,doc", MANIFESTS + MIGRATE, ids=[f"{p.name}:{d['kind']}/{d['metadata']['name']}"
                                                              for p, d in MANIFESTS + MIGRATE])
def test_every_manifest_is_valid_for_the_kubernetes_api(path, doc, version):
    kubernetes_validate.validate(doc, version, strict=True)


def test_the_validation_is_strict_about_unknown_fields():
    """A misspelt field (``readinesProbe``) would be dropped by the API server without a word."""
    broken = copy.deepcopy(deployments()["souk-engine"])
    probe = container(broken).pop("readinessProbe")
    container(broken)["readinesProbe"] = probe
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES[-1], strict=True)


def test_each_role_is_one_deployment_running_its_souk_command():
    found = deployments()
    assert set(found) == {f"souk-{role}" for role in ROLES}
    commands = {role: tuple(container(found[f"souk-{role}"])["command"]) for role in ROLES}
    assert commands == {role: ("souk", role) for role in ROLES}
    for command, run in souk_help(*commands.values()).items():
        assert run.returncode == 0 and run.stdout, f"`{' '.join(command)}`: {run.stderr[-500:]}"


def test_every_deployment_runs_the_image_of_this_version_as_its_user():
    user = next(i.args for i in dockerfile_stages()[1][-1].all("USER"))
    uid, gid = (int(x) for x in user.split(":"))
    for name, deployment in deployments().items():
        pod = deployment["spec"]["template"]["spec"]
        assert container(deployment)["image"] == f"souk:{VERSION}", name
        assert (pod["securityContext"]["runAsNonRoot"], pod["securityContext"]["runAsUser"],
                pod["securityContext"]["runAsGroup"]) == (True, uid, gid), name
        security = container(deployment)["securityContext"]
        assert security["readOnlyRootFilesystem"] and not security["allowPrivilegeEscalation"], name
        assert security["capabilities"]["drop"] == ["ALL"], name
        mounts = {m["mountPath"] for m in container(deployment)["volumeMounts"]}
        assert "/tmp" in mounts, f"{name}: a read-only root needs a writable /tmp"


def settings_of(deployment: dict) -> dict[str, str]:
    """What the container's environment holds: its ConfigMaps' and Secrets' data, then its own env."""
    maps = {doc["metadata"]["name"]: doc.get("data", {}) for doc in of_kind("ConfigMap")}
    secrets = {doc["metadata"]["name"]: doc.get("stringData", {}) for doc in of_kind("Secret")}
    env: dict[str, str] = {}
    for source in container(deployment).get("envFrom", []):
        if "configMapRef" in source:
            env.update(maps[source["configMapRef"]["name"]])
        else:
            env.update(secrets[source["secretRef"]["name"]])
    env.update({item["name"]: item["value"] for item in container(deployment).get("env", [])})
    return env


def test_the_settings_come_from_a_configmap_and_a_secret_that_exist_and_are_ones_souk_reads():
    read = inspect.getsource(inspect.getmodule(Settings))
    maps = {doc["metadata"]["name"] for doc in of_kind("ConfigMap")}
    secrets = {doc["metadata"]["name"] for doc in of_kind("Secret")}
    for name, deployment in deployments().items():
        for source in container(deployment)["envFrom"]:
            ref = source.get("configMapRef") or source["secretRef"]
            assert ref["name"] in (maps if "configMapRef" in source else secrets), f"{name}: {ref} is not declared"
        env = settings_of(deployment)
        for key in env:
            assert f'"{key}"' in read, f"{name}: {key} is not a setting (services/runtime/config.py)"
        assert env["REDIS_URL"] and env["SOUK_VIEWS_REDIS_URL"], name
        assert env["SOUK_HOST"] == "0.0.0.0", f"{name}: the kubelet probes the pod's address, not its loopback"
    secret_keys = {key for doc in of_kind("Secret") for key in doc["stringData"]}
    map_keys = {key for doc in of_kind("ConfigMap") for key in doc["data"]}
    assert {"REDIS_URL", "SOUK_VIEWS_REDIS_URL"} <= secret_keys and not map_keys & {"REDIS_URL", "SOUK_VIEWS_REDIS_URL"}


def test_every_deployment_has_probes_on_what_its_role_serves_and_requests_and_limits():
    for name, deployment in deployments().items():
        spec = container(deployment)
        env = settings_of(deployment)
        ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
        if name == "souk-gateway":
            served = int(env.get("SOUK_PORT", "8000"))
            paths = {"readinessProbe": "/health", "livenessProbe": "/metrics", "startupProbe": "/metrics"}
        else:
            served = int(env["SOUK_METRICS_PORT"])  # a worker serves nothing else
            paths = {"readinessProbe": "/metrics", "livenessProbe": "/metrics", "startupProbe": "/metrics"}
        for probe, path in paths.items():
            get = spec[probe]["httpGet"]
            port = ports[get["port"]] if isinstance(get["port"], str) else get["port"]
            assert (get["path"], port) == (path, served), f"{name} {probe}"
            assert 0 < spec[probe]["timeoutSeconds"] <= spec[probe]["periodSeconds"], f"{name} {probe}"
        resources = spec["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and {"cpu", "memory"} <= set(resources["limits"]), name
        assert quantity(resources["requests"]["memory"]) <= quantity(resources["limits"]["memory"]), name
        assert quantity(resources["requests"]["cpu"]) <= quantity(resources["limits"]["cpu"]), name
        # The startup probe covers the time a role may wait for its Redis before it gives up (SOUK_STARTUP_WAIT_S).
        startup = spec["startupProbe"]
        assert startup["periodSeconds"] * startup["failureThreshold"] > float(env.get("SOUK_STARTUP_WAIT_S", 10)), name


def quantity(text: str | int) -> float:
    """A Kubernetes quantity ("500m", "1", "128Mi", "1G") as a number."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|k|M|G)?", str(text))
    assert found, f"not a quantity: {text!r}"
    scale = {None: 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}
    return float(found.group(1)) * scale[found.group(2)]


def test_each_deployment_selects_its_own_pods_and_no_others():
    found = deployments()
    for name, deployment in found.items():
        assert selects(deployment["spec"]["selector"], pod_labels(deployment)), f"{name} does not select its pods"
        others = [other for other, d in found.items() if other != name and selects(deployment["spec"]["selector"],
                                                                                 pod_labels(d))]
        assert others == [], f"{name}'s selector takes the pods of {others}"


def test_the_gateways_service_reaches_the_gateway_pods_only_on_their_port():
    (service,) = [s for s in of_kind("Service") if s["spec"].get("type", "ClusterIP") != "ExternalName"]
    selected = [name for name, d in deployments().items()
                if service["spec"]["selector"].items() <= pod_labels(d).items()]
    assert selected == ["souk-gateway"]
    ports = {p["name"]: p["containerPort"] for p in container(deployments()["souk-gateway"])["ports"]}
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"] and "http" in ports


def test_the_disruption_budgets_keep_one_engine_and_one_gateway_and_let_a_drain_go_on():
    budgets = of_kind("PodDisruptionBudget")
    covered = []
    for budget in budgets:
        selected = [name for name, d in deployments().items() if selects(budget["spec"]["selector"], pod_labels(d))]
        assert len(selected) == 1, f"{budget['metadata']['name']} selects {selected}"
        replicas = deployments()[selected[0]]["spec"]["replicas"]
        assert 1 <= budget["spec"]["minAvailable"] < replicas, \
            f"{budget['metadata']['name']}: with {replicas} replicas, a drain could never evict one"
        covered += selected
    assert sorted(covered) == ["souk-engine", "souk-gateway"]


def test_the_stores_are_a_redis_cluster_named_as_an_external_service_and_not_deployed():
    external = {s["metadata"]["name"] for s in of_kind("Service") if s["spec"].get("type") == "ExternalName"}
    for name, deployment in deployments().items():
        env = settings_of(deployment)
        for key in ("REDIS_URL", "SOUK_VIEWS_REDIS_URL"):
            assert clients.is_cluster(env[key]), f"{name}: {key}={env[key]} is not a redis+cluster:// URL"
            nodes, _ = clients.cluster_nodes(env[key])  # bad_cluster_url if it is not one
            assert {host for host, _ in nodes} <= external, f"{name}: {key}={env[key]}"
    images = [c["image"] for _, doc in MANIFESTS if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet")
              for c in doc["spec"]["template"]["spec"]["containers"]]
    assert not [i for i in images if "redis" in i], "the Redis is an external dependency, not deployed here"
    assert not of_kind("StatefulSet")


def test_the_event_store_is_created_with_partitions_enough_for_the_clusters_primaries():
    """SOUK_PARTITIONS is read once, when the event store is created (its role hash records it); a partition lives
    in one slot, on one primary: fewer partitions than a minimal cluster's three primaries would leave one idle."""
    for name, deployment in deployments().items():
        partitions = keys.checked(settings_of(deployment)["SOUK_PARTITIONS"])
        assert partitions >= 3, f"{name}: {partitions} partitions"
    assert {key for doc in of_kind("ConfigMap") for key in doc["data"]} >= {"SOUK_PARTITIONS"}


def test_the_migration_job_copies_the_one_redis_store_given_onto_the_cluster_of_the_deployments():
    assert not of_kind("Job"), "a migration runs with the services stopped: not applied with them"
    (job,) = [doc for _, doc in MIGRATE if doc["kind"] == "Job"]
    (source,) = [doc for _, doc in MIGRATE if doc["kind"] == "Secret"]
    pod = job["spec"]["template"]["spec"]
    (run,) = pod["containers"]
    assert pod["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0  # a refusal is read, not retried
    assert run["command"][:4] == ["souk", "store", "migrate", "--to"]
    [(command, help_run)] = souk_help(tuple(run["command"][:3])).items()
    assert help_run.returncode == 0 and "--to" in help_run.stdout, help_run.stderr
    env = {item["name"]: item.get("valueFrom", {}).get("secretKeyRef") for item in run["env"]}
    assert env["REDIS_URL"] == {"name": source["metadata"]["name"], "key": "REDIS_URL"}
    assert run["command"][4] == "$(SOUK_MIGRATE_TO)" and env["SOUK_MIGRATE_TO"] == {"name": "souk-redis",
                                                                                   "key": "REDIS_URL"}
    assert not clients.is_cluster(source["stringData"]["REDIS_URL"])  # the source is one Redis
    assert run["envFrom"] == [{"configMapRef": {"name": "souk-settings"}}]  # SOUK_PARTITIONS: the deployments'
    assert run["image"] == f"souk:{VERSION}" and pod["securityContext"]["runAsUser"] == 10001
