// The contract between the web client's shell (lobby, table page, history, clocks) and each game's board.
//
// The shell owns the page: it follows the game through the library, keeps the latest TableView, shows the seats,
// whose decision is awaited, clocks, presence, undo, history and the result. A board draws only the game itself
// from the seat's view (`props.table.view`, the game's own view) and offers the legal commands.
//
// Rules every board keeps (the browser tests rely on them):
// - Every command of `props.table.legal` is reachable at once as a `<button data-legal="i">` (i: its index in
//   `legal`), with a text or aria-label saying what it does in the game's words; clicking it calls
//   `props.play(i)`. A board may group or place these buttons on the board (a die, a souk, a hex), never hide one
//   behind a menu that needs another click.
// - A board draws from the view alone: what the seat may not see is not in it, so it is not on the page either.
// - Secrets of this seat (a hand, cards face down) are drawn inside elements marked `data-secret`; the other seats'
//   hidden things appear only as counts.
// - No inline event handlers, no global state: render() may be called again with a new view at any time (the
//   shell empties `root` first) and must not throw on any view the server sends (spectators included:
//   `props.table.seat` is null and `legal` is empty). One exception, the page's and never the game's: what a
//   person set to find a move in a long list (`choices.ts`: a search, filters, groups folded) is kept while the
//   list's decision is the same, so a push does not wipe it; by default every button shows.
// - A long list of commands (Istanbul's answers, 1001 Karawane's equipment) goes through `choices.ts`: groups with
//   an index, a search and filters a person may use to narrow it, never a menu every command hides behind.
import type { TableView } from "souk-client";

export interface BoardProps {
  /** The whole table view: `view` (the game's view for this seat), `legal`, `flow`, `seats`, `seat`, `result`. */
  table: TableView;
  /** Sends `table.legal[index]` (the shell adds the command id and expected_version and shows refusals). */
  play(index: number): void;
  /** The seats' names, by seat number. */
  names: readonly string[];
}

export interface Board {
  /** The game's title as players know it (shown above the board). */
  readonly title: string;
  /** Draws the board for `props` into `root` (emptied by the shell before each call). */
  render(root: HTMLElement, props: BoardProps): void;
}
