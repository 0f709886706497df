"""``souk types`` (services/client/typescript.py generates the declarations)."""

from __future__ import annotations

import click

from services.client.typescript import write


@click.command("types")
@click.option("--out", default=None, metavar="FILE", show_default="print",
              help="file to write; the checked-in one is clients/typescript/src/wire.ts")
def command(out: str | None) -> None:
    """The wire format as TypeScript types, for web frontends."""
    text = write(out)
    if not out:
        click.echo(text, nl=False)
