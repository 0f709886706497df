"""Readers for the deployment files, as Docker and Compose read them, for checks that need no Docker daemon.

- ``DockerIgnore``: `.dockerignore` with Docker's rules (moby's patternmatcher: Go ``filepath.Match`` patterns
  plus ``**``, relative to the context's root; a pattern that matches a parent folder matches what is in it;
  ``!`` lets back in; the last pattern that matches a path decides).
- ``dockerfile_stages``: the instructions of a Dockerfile by stage (continuation lines joined, comments dropped,
  ``ARG`` defaults given before the first ``FROM`` substituted in ``FROM``).
- ``load_compose``: docker-compose.yml as Compose resolves it (YAML anchors and merge keys, ``${VAR}``,
  ``${VAR:-default}``, ``${VAR-default}`` and ``$$``), with the environment given.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE = ROOT / "docker-compose.yml"

SOUK_SERVICES = ("engine", "projector", "clock", "webhooks", "gateway")
REDIS_SERVICES = ("redis", "redis-views")


# --- .dockerignore -----------------------------------------------------------------------------------------------

def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """moby/patternmatcher's translation: ``**`` any number of folders (``**/`` too), ``*`` and ``?`` within one
    name, ``[...]`` a class, ``\\`` escapes."""
    out, i = "^", 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            if pattern[i + 1:i + 2] == "*":
                i += 1
                if pattern[i + 1:i + 2] == "/":
                    i += 1
                out += ".*" if i + 1 == len(pattern) else "(.*/)?"
            else:
                out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise ValueError(f"unterminated class in {pattern!r}")
            body = pattern[i + 1:end]
            out += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
            i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(ch)
        i += 1
    return re.compile(out + "$")


@dataclass(frozen=True)
class DockerIgnore:
    patterns: tuple[tuple[bool, str, re.Pattern[str]], ...]  # (is an exception "!", cleaned text, regex)

    @classmethod
    def parse(cls, text: str) -> DockerIgnore:
        patterns = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            exception = line.startswith("!")
            line = line[1:].strip() if exception else line
            line = os.path.normpath(line).lstrip("/") or "."
            patterns.append((exception, line, _pattern_regex(line)))
        return cls(tuple(patterns))

    @classmethod
    def load(cls, path: Path = DOCKERIGNORE) -> DockerIgnore:
        return cls.parse(path.read_text())

    def excludes(self, path: str) -> bool:
        """Whether ``path`` (relative to the context, with ``/``) stays out of the build context."""
        path = os.path.normpath(path)
        parts = path.split("/")
        parents = ["/".join(parts[:i]) for i in range(1, len(parts))]
        excluded = False
        for exception, _, regex in self.patterns:
            if exception != excluded:  # an exclusion of what is already out, or an exception of what is in
                continue
            if regex.match(path) or any(regex.match(parent) for parent in parents):
                excluded = not exception
        return excluded

    def may_let_back_in(self, folder: str) -> bool:
        """Whether an exception could let in something below an excluded ``folder`` (Docker's walker descends
        into such a folder only then)."""
        prefix = folder.rstrip("/") + "/"
        return any(exception and (text + "/").startswith(prefix) for exception, text, _ in self.patterns)

    def context(self, root: Path = ROOT) -> Iterator[str]:
        """The files of the build context of ``root``, as Docker's walker finds them."""
        for folder, dirs, files in os.walk(root):
            rel = os.path.relpath(folder, root)
            rel = "" if rel == "." else rel + "/"
            dirs[:] = [d for d in dirs if not self.excludes(rel + d) or self.may_let_back_in(rel + d)]
            yield from (rel + f for f in files if not self.excludes(rel + f))


# --- Dockerfile --------------------------------------------------------------------------------------------------

@dataclass
class Instruction:
    keyword: str  # upper case
    args: str

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD / ENTRYPOINT / HEALTHCHECK CMD, else None."""
        text = self.args
        if self.keyword == "HEALTHCHECK":
            text = re.sub(r"^(--\S+\s+)*", "", text)
            if not text.upper().startswith("CMD"):
                return None
            text = text[3:].strip()
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None

    def flags(self) -> dict[str, str]:
        """The leading ``--name=value`` options (``COPY --from=build``, ``HEALTHCHECK --interval=10s``)."""
        out = {}
        for word in self.args.split():
            if not word.startswith("--"):
                break
            key, _, value = word[2:].partition("=")
            out[key] = value
        return out

    def operands(self) -> list[str]:
        """The words after the options (a COPY's sources, then its destination)."""
        words = self.args.split()
        return words[len(self.flags()):]


@dataclass
class Stage:
    base: str  # the FROM image, ARGs substituted
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


def _instructions(text: str) -> Iterator[Instruction]:
    logical = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or (not stripped and not logical):
            continue
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        keyword, _, args = logical.strip().partition(" ")
        yield Instruction(keyword.upper(), args.strip())
        logical = ""


def _substitute(text: str, values: Mapping[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m.group(1) or m.group(2), ""), text)


def dockerfile_stages(path: Path = DOCKERFILE) -> tuple[dict[str, str], list[Stage]]:
    """(the global ARGs' defaults, the stages in order)."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for instruction in _instructions(path.read_text()):
        if instruction.keyword == "FROM":
            words = _substitute(instruction.args, args).split()
            words = [w for w in words if not w.startswith("--platform")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif not stages:
            if instruction.keyword == "ARG":
                key, _, default = instruction.args.partition("=")
                args[key.strip()] = default.strip().strip('"')
        else:
            stages[-1].instructions.append(instruction)
    return args, stages


def env_of(stage: Stage) -> dict[str, str]:
    """What a stage's ENV instructions set."""
    env: dict[str, str] = {}
    for instruction in stage.all("ENV"):
        words = shlex.split(instruction.args)
        if words and "=" not in words[0]:  # the legacy form: ENV KEY value
            env[words[0]] = " ".join(words[1:])
            continue
        env.update(word.split("=", 1) for word in words)
    return env


def shell_words(run: Instruction) -> list[list[str]]:
    """A RUN's shell form split into its commands (on ``&&``, ``;`` and ``||``), each as words."""
    commands = re.split(r"&&|\|\||;", run.args)
    return [shlex.split(c) for c in commands if c.strip()]


_HELP: dict[tuple[str, ...], subprocess.CompletedProcess] = {}


def souk_help(*commands: tuple[str, ...]) -> dict[tuple[str, ...], subprocess.CompletedProcess]:
    """``souk ARGS... --help`` for each command (``("souk", "engine")``), the ones not run yet in parallel: it
    exits 0 only if the CLI has the command and accepts its options."""
    runs = {c: subprocess.Popen([sys.executable, "-m", "services.cli", *c[1:], "--help"], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in commands if c not in _HELP}
    for command, run in runs.items():
        stdout, stderr = run.communicate(timeout=60)
        _HELP[command] = subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)
    return {c: _HELP[c] for c in commands}


# --- docker-compose.yml ------------------------------------------------------------------------------------------

_VARIABLE = re.compile(r"\$(?:\$|\{(\w+)(?:(:?-)([^}]*))?\}|(\w+))")


def interpolate(value, env: Mapping[str, str]):
    """Compose's variable substitution in every string of ``value`` (mapping keys included)."""
    if isinstance(value, str):
        def one(m: re.Match[str]) -> str:
            if m.group(0) == "$$":
                return "$"
            name = m.group(1) or m.group(4)
            operator, default = m.group(2), m.group(3) or ""
            if operator == ":-":
                return env.get(name) or default
            if operator == "-":
                return env.get(name, default)
            return env.get(name, "")
        return _VARIABLE.sub(one, value)
    if isinstance(value, dict):
        return {interpolate(k, env): interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


def load_compose(env: Mapping[str, str] | None = None, text: str | None = None) -> dict:
    """The compose file as Compose resolves it, the ``x-`` extension fields dropped."""
    raw = yaml.safe_load(COMPOSE.read_text() if text is None else text)
    resolved = interpolate(raw, {} if env is None else env)
    return {k: v for k, v in resolved.items() if not str(k).startswith("x-")}


def environment(service: dict) -> dict[str, str]:
    """A service's environment as a mapping (Compose accepts a mapping or a list of KEY=VALUE)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def published_ports(service: dict) -> list[tuple[str, str, str]]:
    """(host address, host port, container port) of each published port, short or long syntax."""
    out = []
    for port in service.get("ports") or []:
        if isinstance(port, dict):
            out.append((str(port.get("host_ip", "")), str(port.get("published", "")), str(port["target"])))
            continue
        text = str(port).split("/")[0]
        host, _, target = text.rpartition(":")
        address, _, published = host.rpartition(":") if ":" in host else ("", "", host)
        out.append((address.strip("[]"), published, target))
    return out


def seconds(duration) -> float:
    """A Compose duration ("1m30s", "600s", "2s", "1h") in seconds."""
    if isinstance(duration, (int, float)):
        return float(duration) / 1e9  # a bare number is nanoseconds
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)", str(duration))
    if not parts or "".join(n + u for n, u in parts) != str(duration):
        raise ValueError(f"not a duration: {duration!r}")
    return sum(float(n) * units[u] for n, u in parts)
