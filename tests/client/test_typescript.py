"""The TypeScript types checked in for web frontends (clients/typescript/src/wire.ts) are the contracts' as they are:
regenerating them changes nothing, and they compile (when npm can install TypeScript)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from contracts import api
from contracts.table import TABLE_COMMANDS, TABLE_EVENTS
from domain.kernel import games
from services.cli.main import main
from services.client.typescript import OUT, generate
from tests.npm import npm_install


def test_the_checked_in_typescript_types_are_those_the_contracts_generate():
    assert OUT.read_text() == generate(), (
        "contracts/ changed: run `souk types --out clients/typescript/src/wire.ts` and commit the file")


def test_every_command_event_and_view_is_a_member_of_a_union_discriminated_on_its_tag():
    text = OUT.read_text()
    tagged = [*TABLE_COMMANDS, *TABLE_EVENTS]
    for game in games().values():
        tagged += [*game.command_types, *game.event_types, *game.view_types]
    for cls in tagged:
        tag = cls.__struct_config__.tag
        namespace = tag.split(".")[0]
        assert f'export interface {cls.__name__} {{\n    type: "{tag}";' in text, tag
        assert re.search(rf"^ *\| ({namespace}\.)?{cls.__name__};?$", text, re.MULTILINE), f"{tag} in no union"
    for name in ("Created", "Joined", "Audit", "ApiErrorBody", "GameInfo", "LobbyEntry", "Reply",
                 "CreateGameRequest", "JoinRequest", "CommandRequest"):
        assert f"export interface {name} {{" in text, name
    for name in ("TableView", "LegalCommands", "HistoryPage", "HistoryEntry"):  # generic on the game
        assert f"export interface {name}<G extends GameName = GameName> {{" in text, name
    assert all(re.search(rf"^export interface {name}(<[^>]*>)? {{", text, re.MULTILINE) for name, cls in vars(api).items()
               if isinstance(cls, type) and cls.__module__ == api.__name__ and name != "Strict")


def test_souk_types_writes_the_file(tmp_path):
    main(["types", "--out", str(tmp_path / "souk.ts")])
    assert (tmp_path / "souk.ts").read_text() == generate()


USAGE = """
import type { AnyCommand, AnyEvent, TableView, samarkand } from "./souk";

export function describe(command: AnyCommand): string {
  return command.type === "samarkand.ChooseCard" ? `card ${command.value}` : command.type;
}
export const legal = (view: TableView): AnyCommand[] => view.legal as AnyCommand[];
export const pass: samarkand.Pass = { type: "samarkand.Pass" };
export const won = (event: AnyEvent): boolean => event.type === "table.GameEnded" && event.winners.length > 0;
"""


@pytest.fixture(scope="module")
def tsc(tmp_path_factory) -> str:
    """TypeScript's compiler, from the npm registry (a second or two); the test is skipped without npm."""
    return str(npm_install(tmp_path_factory.mktemp("tsc"), "typescript@5", timeout=120) / ".bin" / "tsc")


def test_the_types_compile_and_narrow_on_type(tsc, tmp_path):
    shutil.copy(OUT, tmp_path / "souk.ts")
    (tmp_path / "usage.ts").write_text(USAGE)
    (tmp_path / "wrong.ts").write_text('import type { AnyCommand } from "./souk";\n'
                                       "export const value = (c: AnyCommand): number => c.value;\n")
    done = subprocess.run([tsc, "--noEmit", "--strict", "--target", "es2020", "usage.ts", "wrong.ts"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    errors = [line for line in done.stdout.splitlines() if "error TS" in line]
    assert errors and all(line.startswith("wrong.ts(") for line in errors), done.stdout + done.stderr
    assert "Property 'value' does not exist" in errors[0]  # a command not narrowed on its type: refused
