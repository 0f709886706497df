"""The ``souk`` command (click).

Every option shows its default and the environment variable it reads (those of
``services.runtime.config.Settings.from_env``). Subcommands that live in other modules are named
``"module:attribute"`` in the lazy maps below and imported only when used, so ``souk --help`` imports no server
code; one whose module is missing is listed as not available and says so when called.

An operator's mistake (a store that does not answer, a URL that is not a Redis URL, a port taken, a bad value in
an environment variable, no ``souk serve`` on the data folder...) ends the command with one line on stderr,
``souk: ...``, and exit status 1; no traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import socket
import sys
import time
from typing import Any

import click

from services.runtime import config
from services.runtime.config import Settings, SettingError
from services.runtime.loop import run  # noqa: F401 - souk's commands run their coroutines with it


class _Log:
    """structlog's logger, imported on first use (structlog and rich take ~0.3 s: `souk --help` does without)."""

    def __getattr__(self, name: str):
        import structlog

        return getattr(structlog.get_logger("souk"), name)


log = _Log()

CONTEXT = {"show_default": True, "help_option_names": ["-h", "--help"], "max_content_width": 110}


class OperatorError(click.ClickException):
    """A mistake of the operator's (or a missing server): one line, ``souk: ...``, exit status 1."""


# --- options that are settings: their environment variable, parsed as Settings.from_env parses it ------------

class SettingType(click.ParamType):
    """A setting's parser (services.runtime.config) as a click type: a value from the environment that does not
    parse names its variable, as Settings.from_env does."""

    def __init__(self, field: str, metavar: str) -> None:
        self.field = field
        self.var, self.parse = config.ENV[field]
        self.name = metavar

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return self.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str) or value.strip() == "":  # parsed already, or empty: not given
            return value
        try:
            return self.parse(value.strip())
        except ValueError as exc:
            if ctx is not None and param is not None and \
                    ctx.get_parameter_source(param.name) == click.core.ParameterSource.ENVIRONMENT:
                raise OperatorError(f"{self.var}={value!r}: {exc}") from None
            self.fail(str(exc), param, ctx)


def setting(*decls: str, field: str, metavar: str, help: str, default: Any = None, **kwargs: Any):
    """An option for the setting ``field``: its environment variable, its parser, and its default shown."""
    var = config.ENV[field][0]
    if default is None:
        default = getattr(Settings, field, None)
    kwargs.setdefault("show_default", True)
    return click.option(*decls, field, type=SettingType(field, metavar), envvar=var, show_envvar=True,
                        default=default, help=help, **kwargs)


def store_options(f):
    f = setting("--data-dir", field="data_dir", metavar="DIR",
                help="the data folder of the embedded Redis that `souk serve` starts (and the other commands find "
                     "there) when REDIS_URL is unset")(f)
    f = setting("--views-redis-url", field="views_redis_url", metavar="URL", default="",
                help="the read store (views, history, lobby; no persistence needed); default: REDIS_URL",
                show_default="REDIS_URL")(f)
    f = setting("--redis-url", field="redis_url", metavar="URL", default="",
                help="the event store (durable: AOF); unset: the data folder's embedded Redis",
                show_default="the embedded Redis")(f)
    return f


def listen_options(f):
    f = setting("--port", field="port", metavar="PORT", help="the port the gateway listens on")(f)
    f = setting("--host", field="host", metavar="HOST", help="the address the gateway listens on")(f)
    return f


def progress_option(f):
    return click.option("--progress/--no-progress", default=None, show_default="on a terminal",
                        help="show a progress bar on stderr")(f)


def settings_of(ctx: click.Context, **overrides: Any) -> Settings:
    """The environment's settings with this command's options (an empty string: not given)."""
    try:
        return Settings.from_env(**{k: (None if v == "" else v) for k, v in overrides.items()})
    except SettingError as exc:
        raise OperatorError(str(exc)) from None


# --- the lazy group -------------------------------------------------------------------------------------------

class LazyGroup(click.Group):
    """click's LazyGroup pattern: ``lazy`` maps a command's name to ``("module:attribute", short help)``; the
    module is imported when the command runs (or shows its own help), never for the group's help."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            return self._load(ctx, name)
        return super().get_command(ctx, name)

    def _load(self, ctx: click.Context, name: str) -> click.Command:
        target, short = self.lazy[name]
        module_name, attribute = target.split(":")
        path = f"{ctx.command_path} {name}"
        if not available(module_name):
            return _unavailable(name, short, f"`{path}` is not available in this version ({module_name} is missing)")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            return _unavailable(name, short, f"`{path}` is not available: {exc}")
        command = getattr(module, attribute, None)
        if not isinstance(command, click.Command):
            return _unavailable(name, short, f"`{path}` is not available: {target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                target, short = self.lazy[name]
                rows.append((name, short if available(target.split(":")[0])
                             else f"{short} (not available in this version)"))
            else:
                command = self.commands[name]
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def available(module_name: str) -> bool:
    """Whether the module exists, found on the file system without importing it nor its parent packages (the
    client package's __init__ alone imports httpx)."""
    import importlib.machinery

    top, *rest = module_name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def _unavailable(name: str, short: str, message: str) -> click.Command:
    def fail() -> None:
        raise OperatorError(message)

    return click.Command(name, callback=fail, help=f"{short} ({message})", short_help=short,
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


LAZY = {
    "types": ("services.cli.types:command", "the wire format as TypeScript types (clients/typescript)"),
    "chaos": ("services.cli.chaos:command", "the real processes under load and faults, then the checks"),
    "archive": ("services.cli.archive:command", "export finished games to records and remove their hot keys"),
    "export": ("services.cli.records:export_command", "print a finished game's record (JSON)"),
    "import": ("services.cli.records:import_command", "make a verified record a finished game here"),
    "replay": ("services.cli.records:replay_command", "print a record's game and scores at version N"),
    "bot": ("services.cli.bots:bot_command", "play a seat of a game on a server (or every free seat) with a bot"),
}
BENCH = {
    "pipeline": ("services.cli.bench.pipeline:pipeline_command",
                 "games driven through the engine and projector processes, without the gateway"),
    "domain": ("services.cli.bench.pipeline:domain_command", "random playouts of the pure domain, no Redis"),
    "http": ("services.cli.bench.http:command", "load over HTTP and WebSocket against the gateway"),
    "storage": ("services.cli.bench.storage:command", "bytes of Redis memory per finished game"),
    "history": ("services.cli.bench.history:command", "reading a finished game's past: the view at a random version"),
    "slow": ("services.cli.bench.slow:command", "slow clients from one address: the connections the gateway holds"),
    "cold": ("services.cli.bench.cold:command", "the engine's cold load of a game at 100, 1,000 and 10,000 events"),
    "bots": ("services.cli.bots:bench_command", "bots against bots: win rates and the share of games that end"),
    "pushes": ("services.cli.bench.pushes:command", "bytes per WebSocket push for each game, whole and as JSON Patch"),
    "peer": ("services.cli.bench.peer:command",
             "Souk against boardgame.io 0.50.2 (npm): same game shape and matches, interleaved"),
    "floor": ("services.cli.bench.floor:command",
              "the least a durable move can cost here (a bare fsync'd WebSocket echo) against boardgame.io"),
    "realtime": ("services.cli.bench.realtime:command",
                 "Samarkand in real time: a value's due instant to its event, the event to the seats' pushes"),
    "migrate": ("services.cli.bench.migrate:command",
                "`souk store migrate --to` timed: a store of finished games into another Redis and onto a cluster"),
}


@click.group(cls=LazyGroup, lazy=LAZY, context_settings=CONTEXT)
@click.version_option(package_name="souk", prog_name="souk", message="%(prog)s %(version)s")
@setting("--log-level", field="log_level", metavar="LEVEL", help="debug, info, warning, error or critical")
@setting("--log-format", field="log_format", metavar="FORMAT", help="json lines, or console for people")
@click.pass_context
def cli(ctx: click.Context, log_level: str, log_format: str) -> None:
    """Souk: an event-sourced backend for board games. `souk serve` runs it all in one process."""
    from services.runtime import logs

    settings = settings_of(ctx, log_level=log_level, log_format=log_format)  # every variable checked here
    logs.configure(settings.log_level, settings.log_format)
    ctx.obj = settings


# --- serving --------------------------------------------------------------------------------------------------

def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything starts (a taken port is said at once, not after 'serving')."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = "the port is taken (SOUK_PORT, --port)" if exc.errno == 98 else (exc.strerror or str(exc))
        raise OperatorError(f"cannot listen on {host}:{port}: {reason}") from None
    except socket.gaierror as exc:  # pragma: no cover - an OSError too, kept for clarity
        sock.close()
        raise OperatorError(f"cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    """The gateway's URL on its bound socket (an IPv6 address in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _listen(app, sock: socket.socket, settings: Settings) -> None:
    """uvicorn on the bound socket; one log line with the URL once it serves."""
    import uvicorn

    from services.gateway.protocols import uvicorn_config

    url = _url(sock)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                log.info("listening", url=url, docs=f"{url}/schema")

        @contextlib.contextmanager
        def capture_signals(self):
            """uvicorn raises the SIGTERM or SIGINT it caught again once it has shut down, which would end the
            process before `souk serve` stops its embedded Redis and removes their record: return instead."""
            with super().capture_signals():
                yield
                getattr(self, "_captured_signals", []).clear()

    server = Server(uvicorn_config(app, settings, log_level="warning", log_config=None))
    from services.runtime import collector

    collector.tune()  # the app is built: freeze it out of the collector, collect less often
    server.run(sockets=[sock])
    if not server.started:
        raise OperatorError(f"the gateway did not start on {url} (see the log above)")


def _check_stores(settings: Settings, views: bool = True, wait: bool = False) -> None:
    """The stores checked (``services.cli.stores.check``). ``wait``, for a service: a store that does not answer
    (a Redis restarting under a supervisor) or refuses writes for a while (out of memory...) is tried again for ``startup_wait_s`` before the one-line error."""
    from services.cli.stores import StoreError, check

    deadline = time.monotonic() + (settings.startup_wait_s if wait else 0.0)
    while True:
        try:
            check(settings, views=views)
            return
        except StoreError as exc:
            if not exc.transient or time.monotonic() >= deadline:
                waited = f" (tried for {settings.startup_wait_s:g} s: SOUK_STARTUP_WAIT_S)" \
                    if wait and exc.transient else ""
                raise OperatorError(f"{exc}{waited}") from None
        time.sleep(0.25)


def _stores(settings: Settings, views: bool = True, wait: bool = False) -> Settings:
    """The settings with the stores' URLs (REDIS_URL, else the data folder's embedded Redis), checked."""
    from services.cli.stores import resolve
    from services.embedded.folder import EmbeddedError

    try:
        settings = resolve(settings)
    except EmbeddedError as exc:
        raise OperatorError(str(exc)) from None
    _check_stores(settings, views=views, wait=wait)
    return settings


@cli.command()
@listen_options
@store_options
@setting("--fsync", field="fsync", metavar="always|everysec",
         help="the embedded event store's appendfsync: always (an accepted command is on disk) or everysec")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, redis_url: str, views_redis_url: str, data_dir: str,
          fsync: str) -> None:
    """Engine, projector, clock worker, webhook worker and gateway in one process. Without REDIS_URL it starts two
    redis-servers (the event store with AOF, the read store in memory) in the data folder, records them there for
    the other commands, and restarts one that dies."""
    from services.embedded.folder import Embedded, EmbeddedError
    from services.embedded.redis import RedisServerError

    settings = settings_of(ctx, host=host, port=port, redis_url=redis_url, views_redis_url=views_redis_url,
                           data_dir=data_dir, fsync=fsync)
    sock = _bind(settings.host, settings.port)
    embedded: Embedded | None = None
    try:
        if not settings.redis_url:
            def mark(_server) -> None:  # a restarted read store is empty: record its role again
                _check_stores(settings)

            try:
                embedded = Embedded(settings.data_dir, settings.fsync, on_restart=mark).start()
            except (EmbeddedError, RedisServerError) as exc:
                raise OperatorError(str(exc)) from None
            settings = settings_of(ctx, host=host, port=port, data_dir=data_dir, fsync=fsync,
                                   redis_url=embedded.events.url, views_redis_url=embedded.views.url)
        _check_stores(settings, wait=True)
        from services.gateway import create_app
        from services.cli.workers import EVERY_ROLE, Workers

        _listen(create_app(settings, Workers(settings, roles=EVERY_ROLE)), sock, settings)
    finally:
        sock.close()
        if embedded is not None:
            embedded.stop()


@cli.command()
@listen_options
@store_options
@setting("--processes", field="gateway_processes", metavar="N",
         help="processes serving the port, each with its own event loop (a gateway is one core at most)")
@click.pass_context
def gateway(ctx: click.Context, host: str, port: int, redis_url: str, views_redis_url: str, data_dir: str,
            gateway_processes: int) -> None:
    """HTTP + WebSocket only (the engine and projector run elsewhere; several gateways may run)."""
    settings = settings_of(ctx, host=host, port=port, redis_url=redis_url, views_redis_url=views_redis_url,
                           data_dir=data_dir, gateway_processes=gateway_processes)
    sock = _bind(settings.host, settings.port)
    try:
        settings = _stores(settings, wait=True)
        if settings.gateway_processes > 1:
            _listen_processes(sock, settings)
            return
        from services.gateway import create_app

        _listen(create_app(settings), sock, settings)
    finally:
        sock.close()


def _listen_processes(sock: socket.socket, settings: Settings) -> None:
    """uvicorn's process manager (``uvicorn.supervisors.Multiprocess``) on the bound socket: ``gateway_processes``
    children, each building the app from the environment (``services.gateway.app.from_env``) and accepting on
    the one socket; one that dies is started again; SIGTERM or SIGINT stops them all. The children get the stores
    this process resolved (the data folder's embedded Redis included), the event store's partitions and its log
    settings."""
    import os

    from uvicorn.supervisors import Multiprocess

    from services.gateway.protocols import uvicorn_config

    from services.store import keys

    os.environ.update({"REDIS_URL": settings.redis_url, "SOUK_VIEWS_REDIS_URL": settings.views_url,
                       "SOUK_LOG_LEVEL": settings.log_level, "SOUK_LOG_FORMAT": settings.log_format,
                       "SOUK_PARTITIONS": str(len(keys.PARTITIONS))})  # the store's, read by its check
    config = uvicorn_config("services.gateway.app:from_env", settings, factory=True,
                            workers=settings.gateway_processes, log_level="warning", log_config=None)
    url = _url(sock)
    sock.listen(config.backlog)  # connections wait in the backlog until a process accepts them
    log.info("listening", url=url, docs=f"{url}/schema", processes=settings.gateway_processes)
    Multiprocess(config, sockets=[sock]).run()




def _worker(ctx: click.Context, role: str, **options: Any) -> None:
    from services.cli.workers import Workers

    settings = _stores(settings_of(ctx, **options), views=role == "projector", wait=True)
    log.info("worker_starting", role=role, consumer=settings.consumer, redis=_shown(settings.redis_url),
             **({"partition": settings.projector_partition} if role == "projector" else {}))
    app = Workers(settings, roles=(role,)).app()
    from services.runtime import collector

    collector.tune()
    run(app.run())


def _shown(url: str | None) -> str | None:
    from services.cli.stores import shown

    return shown(url) if url else url


def metrics_option(f):
    return setting("--metrics-port", field="metrics_port", metavar="PORT",
                   help="serve Prometheus metrics at http://SOUK_HOST:PORT/metrics (0: not served)")(f)


@cli.command(short_help="The engine alone (several may run).")
@store_options
@metrics_option
@click.pass_context
def engine(ctx: click.Context, **options: Any) -> None:
    """The engine alone: decides commands, appends events (several may run)."""
    _worker(ctx, "engine", **options)


@cli.command()
@store_options
@metrics_option
@setting("--partition", field="projector_partition", metavar="i/N",
         help="project the games of partition i of N; run every partition (0/1: every game)")
@click.pass_context
def projector(ctx: click.Context, **options: Any) -> None:
    """The projector alone: folds events into the read models."""
    _worker(ctx, "projector", **options)


@cli.command(short_help="The webhook worker alone (several may run).")
@store_options
@metrics_option
@click.option("--dead", is_flag=True, help="print the latest dead letters (deliveries given up on) and exit")
@click.pass_context
def webhooks(ctx: click.Context, dead: bool, **options: Any) -> None:
    """The webhook worker alone: reads the events for the games with webhooks, and posts their notices from the
    outbox, with retries (README, Webhooks). Several may run. --dead prints the dead letters as JSON lines."""
    if not dead:
        _worker(ctx, "webhooks", **options)
        return
    from services.store import clients

    from services.webhooks import outbox

    settings = _stores(settings_of(ctx, **options), views=False)

    async def show() -> None:
        client = clients.async_client(settings.redis_url)
        try:
            for delivery, reason in await outbox.dead_letters(client):
                click.echo(outbox.encode({"reason": reason, "delivery": delivery}).decode())
        finally:
            await client.aclose()

    run(show())


@cli.command(short_help="The clock worker alone (several may run).")
@store_options
@metrics_option
@setting("--takeover", field="takeover_strategy", metavar="STRATEGY",
         help="the bot that plays a timed-out, absent or resigned seat: random, greedy, mcts, seeker")
@click.pass_context
def clock(ctx: click.Context, **options: Any) -> None:
    """The clock worker alone: sends each deadline, game timer and bot move that falls due as a command (several
    may run: each is sent once)."""
    _worker(ctx, "clock", **options)


@cli.command(short_help="Check a record file, or a game's record on a server.")
@click.argument("target", metavar="FILE|GAME_ID")
@click.option("--server", default="http://127.0.0.1:8000", show_default=True, metavar="URL",
              help="the gateway to read GAME_ID from")
@progress_option
def verify(target: str, server: str, progress: bool | None) -> None:
    """Check a record: FILE (souk export, GET /games/{id}/record; - for stdin): its hash chain, its seed against
    its commitment, and every command re-run by the rules giving the recorded events byte for byte; prints OK
    with the counts, or names the first event that differs (exit status 1). GAME_ID: a game on a server, its
    chain, and once over its commitments and seed."""
    import os

    if target == "-" or os.path.isfile(target) or target.endswith(".json"):
        from services.cli.records import verify_file

        if not verify_file(target, progress).ok:
            sys.exit(1)
        return
    from services.history.audit import verify_game

    game_id = target
    try:
        what, problems = verify_game(server, game_id)
    except (OSError, ValueError) as exc:  # urllib's URLError (no server there), a URL that is not http(s)
        reason = getattr(exc, "reason", None) or exc
        raise OperatorError(f"cannot read {game_id} from {server} (--server): {reason}") from None
    for problem in problems:
        click.echo(problem)
    if problems:
        sys.exit(f"souk verify: the {what} of {game_id} does not hold ({len(problems)} problems)")
    click.echo(f"the {what} of {game_id} holds: " + ("chain, commitments and seed checked" if what == "audit"
               else "chain checked (secrets are committed to; they open once the game is over)"))


@cli.command()
@click.option("--out", default=None, metavar="FILE", show_default="print", help="file to write")
def schema(out: str | None) -> None:
    """The JSON Schema of the wire format."""
    from services.gateway.schema import write

    text = write(out)
    if not out:
        click.echo(text)


@cli.group(cls=LazyGroup, lazy=BENCH)
def bench() -> None:
    """Benchmarks (see the README for what was measured)."""


@cli.group()
def store() -> None:
    """The event store."""


@store.command()
@store_options
@click.option("--to", "target", default=None, metavar="URL",
              help="copy the event store into this empty Redis (or redis+cluster://...) with SOUK_PARTITIONS "
                   "partitions, instead of renaming an old store's keys in place")
@setting("--partitions", field="partitions", metavar="P", help="the partitions of the copy (--to)")
@click.pass_context
def migrate(ctx: click.Context, target: str | None, **options: Any) -> None:
    """Move an event store to another layout; Souk's services must be stopped. Without --to: rename the keys of a
    store of the layout of before partitions to the partitions' (one partition; a store that has its partitions
    is left as it is). With --to URL: copy the store into that empty Redis or Redis Cluster with --partitions
    partitions, verify it, and record its role last (the source is only read; stopped half way, run it again)."""
    from services.cli.stores import StoreError, migrate as migrate_store, resolve
    from services.embedded.folder import EmbeddedError

    try:
        settings = resolve(settings_of(ctx, **options))
        if target is not None:
            from services.cli.migration import migrate_to

            copied = migrate_to(settings, target)
            click.echo(copied or f"the event store was migrated already to {_shown(target)}: nothing to do")
            return
        renamed = migrate_store(settings)
    except (StoreError, EmbeddedError) as exc:
        raise OperatorError(str(exc)) from None
    if renamed is None:
        click.echo("the event store has its partitions already: nothing to migrate")
    else:
        click.echo(f"renamed {renamed[0]} partition keys and {renamed[1]} game keys: the event store has 1 partition")


@cli.group()
def projections() -> None:
    """The read models."""


@projections.command()
@store_options
@click.option("--force", is_flag=True, help="rebuild even though projectors seem to be running")
@progress_option
@click.pass_context
def rebuild(ctx: click.Context, force: bool, progress: bool | None, **options: Any) -> None:
    """Project every game again from its first event into the read store."""
    from services.store import clients

    from services.runtime.progress import Progress
    from services.projector.service import Projector
    from services.store import keys
    from services.store.events import RedisEventStore

    settings = _stores(settings_of(ctx, **options))

    async def rebuild_all() -> int:
        events = clients.async_client(settings.redis_url)
        views = clients.async_client(settings.views_url)
        try:
            active = await _active_projectors(events)
            if active and not force:
                raise OperatorError(f"projectors {', '.join(active)} read events in the last minute; stop them "
                                    "first (or pass --force)")
            projector = Projector(views, RedisEventStore(events), snapshot_every=settings.snapshot_every)
            try:
                games = sum([await events.zcard(keys.games(p)) for p in keys.PARTITIONS])
                with Progress(games, "projecting games", progress) as bar:
                    return await projector.rebuild(progress=bar.advance)
            finally:
                await projector.aclose()
                await projector.store.aclose()
        finally:
            await events.aclose()
            await views.aclose()

    click.echo(f"rebuilt the read models of {run(rebuild_all())} games")


async def _active_projectors(redis) -> list[str]:
    from services.store import keys
    from services.store.streams import consumer_groups, idle_ms

    active = []
    for stream in map(keys.events, keys.PARTITIONS):
        for group in await consumer_groups(redis, stream):  # `projector`, or `projector:i/N` for a partition
            if group == keys.PROJECTOR_GROUP or group.startswith(f"{keys.PROJECTOR_GROUP}:"):
                active += [c["name"].decode() if isinstance(c["name"], bytes) else c["name"]
                           for c in await redis.xinfo_consumers(stream, group) if idle_ms(c) < 60_000]
    return sorted(set(active))


# --- errors -----------------------------------------------------------------------------------------------------

def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def _operator_errors() -> tuple[type[Exception], ...]:
    """The exceptions that are an operator's mistake or a missing server, among the modules loaded (an error
    can only come from a module that was imported: `souk --help` imports none of them)."""
    found: list[type[Exception]] = [SettingError]
    for module, name in (("services.embedded.folder", "EmbeddedError"), ("services.embedded.redis", "RedisServerError"),
                         ("services.cli.stores", "StoreError")):
        if module in sys.modules:
            found.append(getattr(sys.modules[module], name))
    return tuple(found)


def main(argv: list[str] | None = None) -> None:
    """The ``souk`` entry point (``python -m services.cli`` too)."""
    try:
        code = cli.main(args=argv, prog_name="souk", standalone_mode=False)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        click.echo(f"souk: {_one_line(exc.format_message())}{hint}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        message = exc.format_message()
        click.echo(f"souk: {_one_line(message) if isinstance(exc, OperatorError) else message}", err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("souk: aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        if not isinstance(exc, _operator_errors()):
            raise
        click.echo(f"souk: {_one_line(str(exc))}", err=True)
        sys.exit(1)
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
