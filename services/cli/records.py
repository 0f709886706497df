"""``souk export``, ``souk verify FILE``, ``souk import`` and ``souk replay``: records on the command line
(``services.history.transfer`` does the work, ``services.history.verify`` the checking: libraries that know
nothing of the command line)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import msgspec

from domain import table as tbl
from services.cli.main import OperatorError, _stores, progress_option, run, settings_of, store_options
from services.history import record as records
from services.history.transfer import import_record, read_record, replay, scores
from services.history.verify import Verdict, verify_record
from services.runtime.progress import Progress
from services.store import clients
from services.store.events import RedisEventStore


# --- the commands ---------------------------------------------------------------------------------------------

def _load(path: str) -> records.Record:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise OperatorError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return records.decode(data)
    except records.RecordError as exc:
        raise OperatorError(f"{path}: {exc}") from None


def verify_file(path: str, progress: bool | None) -> Verdict:
    """``souk verify FILE``: prints OK with the counts, or the problems (the first event that differs first)."""
    record = _load(path)
    with Progress(len(record.events), "re-running the record", progress) as bar:
        verdict = verify_record(record, progress=bar.advance)
    if verdict.ok:
        click.echo(verdict.summary())
        if verdict.unverified:
            click.echo("not determined by the events, so not checked: the header's " + ", ".join(verdict.unverified))
    else:
        for problem in verdict.problems:
            click.echo(problem)
    return verdict


def _settings(ctx: click.Context, **options: Any):
    return _stores(settings_of(ctx, **options), views=False)


@click.command("export")
@click.argument("game_id")
@click.option("--out", default=None, metavar="FILE", show_default="print", help="the file to write")
@store_options
@click.pass_context
def export_command(ctx: click.Context, game_id: str, out: str | None, **options: Any) -> None:
    """Print a finished game's record (JSON): header, every accepted command, every event with its envelope and
    hash, the seed and its commitment. `souk verify FILE` checks it anywhere."""
    settings = _settings(ctx, **options)

    async def go() -> records.Record:
        events = clients.async_client(settings.redis_url)
        store = RedisEventStore(events)
        try:
            return await read_record(store, events, game_id)
        finally:
            await store.aclose()
            await events.aclose()

    try:
        data = records.encode(run(go()))
    except records.RecordError as exc:
        raise OperatorError(str(exc)) from None
    if out:
        Path(out).write_bytes(data)
    else:
        sys.stdout.buffer.write(data + b"\n")


@click.command("import")
@click.argument("path", metavar="FILE")
@store_options
@progress_option
@click.pass_context
def import_command(ctx: click.Context, path: str, progress: bool | None, **options: Any) -> None:
    """Make a record (souk export, GET /games/{id}/record) a finished game of this server, under a new id, once it
    verifies; prints the new id."""
    record = _load(path)
    settings = _settings(ctx, **options)

    async def go() -> str:
        events = clients.async_client(settings.redis_url)
        try:
            with Progress(len(record.events), "verifying the record", progress) as bar:
                return await import_record(events, record, progress=bar.advance)
        finally:
            await events.aclose()

    try:
        game_id = run(go())
    except records.RecordError as exc:
        raise OperatorError(f"{path}: {exc}") from None
    click.echo(game_id)


@click.command("replay")
@click.argument("path", metavar="FILE")
@click.option("--to", "to", type=click.IntRange(0), default=None, metavar="N", show_default="the end",
              help="the version to stop at (the number of events folded)")
@click.option("--seat", type=int, default=None, help="show this seat's view (default: the spectator's)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object: version, status, scores, view")
@progress_option
def replay_command(path: str, to: int | None, seat: int | None, as_json: bool, progress: bool | None) -> None:
    """Print the state and the scores of a record's game at version N."""
    record = _load(path)
    if to is not None and to > len(record.events):
        raise click.BadParameter(f"the record has {len(record.events)} events", param_hint="--to")
    with Progress(len(record.events) if to is None else to, "replaying", progress) as bar:
        table = replay(record, to, progress=bar.advance)
    if not table.exists:
        raise OperatorError("at version 0 there is no game yet")
    if seat is not None and not 0 <= seat < table.seats:
        raise click.BadParameter(f"seats are 0 to {table.seats - 1}", param_hint="--seat")
    view = tbl.views(table, record.header.game_id)[seat]
    points = scores(table, view.view)
    if as_json:
        click.echo(json.dumps({"version": table.version, "status": table.status, "scores": points,
                               "awaiting": list(view.flow.awaiting), "view": msgspec.to_builtins(view)}))
        return
    click.echo(f"{record.header.game} {record.header.game_id} at version {table.version} of "
               f"{len(record.events)}: {table.status}"
               + (f", awaiting seat(s) {', '.join(map(str, view.flow.awaiting))}" if view.flow.awaiting else ""))
    click.echo("scores: " + (", ".join(f"seat {i} {s}" for i, s in enumerate(points)) if points is not None
                             else "none kept before the end"))
    click.echo(json.dumps(msgspec.to_builtins(view), indent=1))
