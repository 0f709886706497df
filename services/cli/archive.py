"""``souk archive --older-than DURATION [--out DIR]``: finished games out of Redis, into record files
(``services.history.archive`` does the work; see its doc)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from services.cli.main import _stores, progress_option, run, settings_of, store_options
from services.history.archive import Report, archive, parse_duration
from services.runtime.progress import Progress
from services.store import clients, keys


@click.command("archive")
@click.option("--older-than", "older_than", required=True, metavar="DURATION",
              help="archive the finished games whose last event is older than this: 30d, 12h, 1d12h, 90m, 45s")
@click.option("--out", "out", default="archive", show_default=True, type=click.Path(file_okay=False),
              help="the folder the record files go to ({game_id}.souk.json)")
@store_options
@progress_option
@click.pass_context
def command(ctx: click.Context, older_than: str, out: str, progress: bool | None, **options) -> None:
    """Export each finished game older than the retention to a record file, verify it, then remove the game's
    hot keys (it then answers 410 archived)."""
    try:
        seconds = parse_duration(older_than)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from None
    settings = _stores(settings_of(ctx, **options))  # REDIS_URL, else the data folder's; checked: one line if not
    report = run(_run(settings.redis_url, settings.views_url, seconds, Path(out), progress))
    click.echo(f"archived {len(report.archived)} games to {out}/ ({report.skipped} not finished or too recent)")
    for game_id, why in report.failed.items():
        click.echo(f"not archived: {game_id}: {why}", err=True)
    if report.failed:
        raise SystemExit(1)


async def _run(events_url: str, views_url: str, seconds: float, out: Path, progress: bool | None = None) -> Report:
    events, views = clients.async_client(events_url), clients.async_client(views_url or events_url)
    try:
        candidates = sum([await events.zcount(keys.games(p), "-inf", repr(time.time() - seconds))
                          for p in keys.PARTITIONS])
        with Progress(candidates, "archiving games", progress) as bar:
            return await archive(events, views, seconds, out, progress=bar.advance)
    finally:
        await events.aclose()
        await views.aclose()
