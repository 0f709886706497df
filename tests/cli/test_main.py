"""The `souk` group: lazy subcommands, every option's default and environment variable, --version."""

from __future__ import annotations

from pathlib import Path

import importlib.metadata
import subprocess
import sys

import click
import pytest

from services.cli import main as cli_main
from services.cli.main import BENCH, LAZY, LazyGroup, OperatorError, SettingType, cli
from services.runtime import config
from tests.embedded.support import ROOT, clean_env, souk

HEAVY = ("litestar", "uvicorn", "faststream", "redis", "httpx", "structlog", "msgspec", "services.gateway",
         "services.client", "services.bench", "services.reliability", "services.cli.workers")


def test_souk_help_lists_every_command_and_imports_no_server_code():
    code = ("import sys\nfrom services.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print('LOADED', sorted(m for m in sys.modules if m.startswith({HEAVY!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=clean_env(),
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("LOADED []"), done.stdout.splitlines()[-1]
    for name in ("serve", "gateway", "engine", "projector", "verify", "schema", "types", "projections", "bench",
                 "chaos", "archive", "bot"):
        assert f"\n  {name} " in done.stdout, name


def test_the_version_is_the_installed_package_s():
    done = souk("--version", env=clean_env())
    assert done.returncode == 0 and done.stdout.strip() == f"souk {importlib.metadata.version('souk')}"


def commands(group: click.Group, ctx: click.Context, path: str = "souk"):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        sub = click.Context(command, parent=ctx, info_name=name)
        yield f"{path} {name}", command, sub
        if isinstance(command, click.Group):
            yield from commands(command, sub, f"{path} {name}")


def test_every_option_shows_its_default_and_every_setting_its_environment_variable():
    ctx = click.Context(cli, info_name="souk", **{k: v for k, v in cli.context_settings.items()
                                                   if k in ("show_default", "max_content_width")})
    seen = set()
    for path, command, sub in [("souk", cli, ctx), *commands(cli, ctx)]:
        for param in command.params:
            if not isinstance(param, click.Option) or param.name == "help" or param.hidden:
                continue
            nothing = param.required or param.default is None or param.default is getattr(click.core, "UNSET", None)
            if param.is_flag and not param.secondary_opts or nothing and not param.show_default:
                continue  # a plain flag, or an option with nothing to default to
            record = param.get_help_record(sub)
            assert record and "default:" in record[1], f"{path} {param.opts}: no default shown ({record})"
            if isinstance(param.type, SettingType):
                assert param.envvar == config.ENV[param.name][0] and f"env var: {param.envvar}" in record[1], \
                    (path, param.opts)
                seen.add(param.envvar)
    assert {"REDIS_URL", "SOUK_VIEWS_REDIS_URL", "SOUK_DATA_DIR", "SOUK_HOST", "SOUK_PORT", "SOUK_LOG_LEVEL",
            "SOUK_LOG_FORMAT", "SOUK_FSYNC", "SOUK_PROJECTOR_PARTITION", "SOUK_METRICS_PORT"} <= seen


def test_serve_help_shows_defaults_and_environment_variables():
    done = souk("serve", "--help", env=clean_env())
    text = " ".join(done.stdout.split())
    for shown in ("env var: SOUK_PORT; default: 8000", "env var: SOUK_HOST; default: 127.0.0.1",
                  "env var: REDIS_URL", "env var: SOUK_DATA_DIR; default: .souk-data",
                  "env var: SOUK_FSYNC; default: always"):
        assert shown in text, shown


def test_the_lazy_maps_name_the_commands_of_other_modules():
    assert LAZY["archive"][0] == "services.cli.archive:command"
    assert BENCH["http"][0] == "services.cli.bench.http:command" and BENCH["storage"][0] == "services.cli.bench.storage:command"
    ctx = click.Context(cli, info_name="souk")
    for name, (target, _) in {**LAZY, **BENCH}.items():
        if cli_main.available(target.split(":")[0]):
            group = cli if name in LAZY else cli.get_command(ctx, "bench")
            assert isinstance(group.get_command(ctx, name), click.Command), target


def test_a_command_whose_module_does_not_exist_is_listed_as_not_available_and_says_so_when_called():
    group = LazyGroup("souk", lazy={"ghost": ("services.nowhere.ghost:command", "haunts the store"),
                                    "present": ("services.cli.types:command", "types")})
    ctx = click.Context(group, info_name="souk")
    assert "haunts the store (not available in this version)" in group.get_help(ctx)
    command = group.get_command(ctx, "ghost")
    with pytest.raises(OperatorError, match=r"`souk ghost` is not available in this version \(services.nowhere"):
        command.main(["--any", "thing"], standalone_mode=False)
    assert group.get_command(ctx, "present").name == "types"


def test_a_missing_command_module_ends_souk_in_one_line():
    done = souk("archive", "--older-than", "30d", env=clean_env()) if not cli_main.available(
        "services.cli.archive") else souk("bench", "nothing-here", env=clean_env())
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("souk: ")


def test_every_setting_s_environment_variable_is_in_the_readme_s_table():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    missing = [var for var, _ in config.ENV.values() if not any(f"`{var}`" in row for row in rows)]
    assert missing == []
