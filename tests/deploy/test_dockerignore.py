"""The image's build context (issue #9 item 10): it used to carry .venv (200 MB), the embedded Redis's data folder
(every game's events), .git, the caches and the tests. `.dockerignore` is read here with Docker's rules
(tests/deploy/support.py), and the rules themselves are checked on cases whose answer Docker documents."""

from __future__ import annotations

import subprocess

import pytest

from tests.deploy.support import ROOT, DockerIgnore, dockerfile_stages

LEFT_OUT = [
    ".venv/bin/python",
    ".venv/lib/python3.11/site-packages/litestar/__init__.py",
    "venv/bin/python",
    ".souk-data/events/appendonlydir/appendonly.aof.1.incr.aof",
    ".souk-data/views/dump.rdb",
    ".git/HEAD",
    ".git/objects/pack/pack-0.pack",
    "tests/conftest.py",
    "tests/e2e/test_readme.py",
    ".pytest_cache/v/cache/lastfailed",
    ".hypothesis/examples/0/1",
    "services/__pycache__/__init__.cpython-311.pyc",
    "services/store/__pycache__/keys.cpython-311.pyc",
    "domain/yspahan/rules.pyc",
    "souk.egg-info/PKG-INFO",
    "build/lib/services/__init__.py",
    "dist/souk-0.1.0-py3-none-any.whl",
    ".env",
    "services/.env",
    ".ci/run",
    "docker-compose.yml",
    "docs/rules-decisions.md",
    "clients/typescript/src/wire.ts",
    "bench-results.json",
]


@pytest.fixture(scope="module")
def ignore() -> DockerIgnore:
    return DockerIgnore.load()


@pytest.mark.parametrize("path", LEFT_OUT)
def test_the_build_context_leaves_out_the_venv_the_data_folder_git_caches_and_tests(ignore, path):
    assert ignore.excludes(path), f"{path} would be sent to the Docker daemon and could end up in the image"


def copied_sources() -> list[str]:
    """What the Dockerfile COPYs from the context (not from another stage)."""
    _, stages = dockerfile_stages()
    return [source for stage in stages for copy in stage.all("COPY") + stage.all("ADD")
            if "from" not in copy.flags() for source in copy.operands()[:-1]]


def test_every_file_the_dockerfile_copies_is_in_the_build_context(ignore):
    sources = copied_sources()
    assert {"pyproject.toml", "README.md", "contracts", "domain", "services", "deploy/healthcheck.py"} <= set(sources)
    context = set(ignore.context())
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"the Dockerfile copies {source}, which does not exist"
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()
                                                and "__pycache__" not in p.parts and p.suffix != ".pyc"]
        missing = [str(f.relative_to(ROOT)) for f in files if str(f.relative_to(ROOT)) not in context]
        assert files and not missing, f"COPY {source}: left out of the build context by .dockerignore: {missing}"


def test_every_tracked_module_of_the_packages_reaches_the_build_context(ignore):
    tracked = subprocess.run(["git", "ls-files", "contracts", "domain", "services"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    assert len(tracked) > 50
    assert [path for path in tracked if ignore.excludes(path)] == []


def test_the_whole_build_context_is_the_source_of_the_image_and_nothing_else(ignore):
    context = list(ignore.context())
    tops = {path.split("/")[0] for path in context}
    assert tops <= {"pyproject.toml", "README.md", "contracts", "domain", "services", "deploy"}, tops
    assert [p for p in context if p.startswith("deploy/")] == ["deploy/healthcheck.py"]
    size = sum((ROOT / p).stat().st_size for p in context)
    assert size < 5_000_000, f"the build context is {size / 1e6:.1f} MB"


# Docker's own rules, on cases its documentation and moby/patternmatcher's tests answer: if the reader above got
# them wrong, the checks above would prove nothing.
@pytest.mark.parametrize(("rules", "path", "excluded"), [
    ("*.md\n!README.md", "README.md", False),           # an exception after the pattern lets the file back in
    ("!README.md\n*.md", "README.md", True),            # ... before it, it does not: the last match decides
    ("*", "services/store/keys.py", True),              # a pattern that matches a parent folder takes its content
    ("*\n!services", "services/store/keys.py", False),  # ... and so does an exception
    ("*/temp*", "somedir/temporary.txt", True),         # the documentation's examples
    ("*/temp*", "somedir/sub/temporary.txt", False),
    ("*/*/temp*", "somedir/subdir/temporary.txt", True),
    ("temp?", "temp1", True),
    ("temp?", "temp12", False),
    ("**/*.go", "a/b/c.go", True),
    ("**/*.go", "c.go", True),
    ("**/__pycache__", "services/store/__pycache__/x.pyc", True),
    ("/.git", ".git/HEAD", True),                       # a leading slash means the context's root
    ("build", "src/build/x", False),                    # a name without ** matches at the root only
    ("a/**", "a/b/c", True),
    ("a/**", "b/a/c", False),
    ("file[0-9]", "file7", True),
    ("file[!0-9]", "file7", False),
])
def test_the_reader_follows_dockers_rules(rules, path, excluded):
    assert DockerIgnore.parse(rules).excludes(path) is excluded
