"""deploy/Dockerfile (issue #9 item 10), read without a Docker daemon: a build stage that makes and installs the
wheel, a runtime stage from the same pinned Python 3.11 that only copies the installed environment, a non-root user
with a fixed uid, a command and a healthcheck that exist."""

from __future__ import annotations

import re
import tomllib

import pytest
import setuptools

from tests.deploy.support import ROOT, Stage, dockerfile_stages, env_of, shell_words, souk_help

PINNED_PYTHON = re.compile(r"^python:3\.11\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?$")
BUILD_TOOLS = {"gcc", "g++", "cc", "make", "build-essential", "clang", "python3-dev", "libc6-dev", "cmake", "git"}


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return dockerfile_stages()[1]


def test_the_image_is_built_in_two_stages_from_one_pinned_python_3_11_slim_base(stages):
    assert len(stages) >= 2
    bases = {stage.base for stage in stages}
    assert len(bases) == 1, f"the stages start from different images: {bases}"
    base = bases.pop()
    assert PINNED_PYTHON.match(base), f"{base}: pin Python 3.11's patch release and the Debian release (-slim-...)"


def test_the_build_stage_installs_the_wheel_into_an_environment_the_runtime_copies(stages):
    build, runtime = stages[0], stages[-1]
    commands = [words for run in build.all("RUN") for words in shell_words(run)]
    assert any(w[:2] == ["pip", "wheel"] or w[:3] == ["python", "-m", "build"] for w in commands), commands
    installs = [w for w in commands if w[0].endswith("pip") and "install" in w]
    assert any(any(arg.endswith(".whl") for arg in w) for w in installs), f"no wheel installed: {installs}"
    venv_made = next(w for w in commands if w[:3] == ["python", "-m", "venv"])
    venv = venv_made[-1]
    assert "--without-pip" in venv_made, "pip and setuptools (build tools) would be copied into the runtime"
    assert all(w[:3] == ["pip", "--python", f"{venv}/bin/python"] for w in installs), \
        "every install goes into the environment the runtime copies"
    copies = [c for c in runtime.all("COPY") if c.flags().get("from") == build.name]
    assert [c.operands() for c in copies] == [[venv, venv]], "the runtime copies the environment, at the same path"
    assert env_of(runtime)["PATH"].startswith(f"{venv}/bin:")


def test_the_runtime_stage_installs_nothing_and_carries_no_build_tools(stages):
    runtime = stages[-1]
    removed = set()
    for run in runtime.all("RUN"):
        for words in shell_words(run):
            if words[:4] == ["python", "-m", "pip", "uninstall"]:
                removed |= set(words[4:])
                continue
            assert words[0] not in {"pip", "pip3", "apt-get", "apt", "apk", "python"}, f"RUN {run.args}"
            assert not BUILD_TOOLS & set(words), f"RUN {run.args}"
    assert {"pip", "setuptools", "wheel"} <= removed, "the base image's own build tools stay in the runtime"
    assert not [c for c in runtime.all("COPY") if c.operands()[0] in {".", "services", "contracts", "domain"}], \
        "the source tree stays in the build stage"


def test_the_runtime_runs_as_a_fixed_non_root_uid(stages):
    runtime = stages[-1]
    users = runtime.all("USER")
    assert users, "no USER: the container would run as root"
    assert runtime.instructions.index(users[-1]) > max(runtime.instructions.index(r) for r in runtime.all("RUN"))
    user, _, group = users[-1].args.partition(":")
    assert user.isdigit() and int(user) >= 1000, f"USER {users[-1].args}: a fixed numeric uid, not root"
    created = " ".join(run.args for run in runtime.all("RUN"))
    assert re.search(rf"useradd\b.*--uid {user}\b", created), f"no user is created with uid {user}"
    assert not group or re.search(rf"groupadd\b.*--gid {group}\b", created), f"no group is created with gid {group}"


def test_the_image_starts_a_souk_command_and_probes_its_health(stages):
    runtime = stages[-1]
    starts = runtime.all("CMD") + runtime.all("ENTRYPOINT")
    assert starts, "no CMD or ENTRYPOINT"
    command = starts[-1].exec_form()
    assert command and command[0] == "souk", f"{starts[-1].keyword} {starts[-1].args}"
    help_ = souk_help(tuple(command))[tuple(command)]
    assert help_.returncode == 0, f"`{' '.join(command)}` is not a souk command: {help_.stderr[-500:]}"
    checks = runtime.all("HEALTHCHECK")
    assert checks, "no HEALTHCHECK"
    probe = checks[-1].exec_form()
    assert probe == ["python", "/opt/souk/healthcheck.py"], checks[-1].args
    assert any(c.operands() == ["deploy/healthcheck.py", probe[1]] for c in runtime.all("COPY"))
    assert {"interval", "timeout", "retries"} <= set(checks[-1].flags())


def test_inside_the_container_the_gateway_listens_on_every_interface(stages):
    env = env_of(stages[-1])
    assert env["SOUK_HOST"] == "0.0.0.0"
    assert env["SOUK_PORT"] in stages[-1].all("EXPOSE")[0].args.split()


def test_the_wheel_the_image_installs_carries_every_module():
    """The image runs the installed wheel, not the source tree (as `pip install -e .` does): a folder of modules
    that package discovery misses (no __init__.py) would work here and be missing from the image."""
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = set(setuptools.find_packages(str(ROOT), include=include))
    folders = {".".join(p.relative_to(ROOT).parent.parts) for top in ("contracts", "domain", "services")
               for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert folders - packages == set()
