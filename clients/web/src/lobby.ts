// The lobby (`#/`): the games (filters by game and status, paging), and the form that creates a game with the
// catalog's options (each game's own, with their defaults, and the table's clock and undo options).
import type { GameInfo, LobbyEntry, LobbyQuery } from "souk-client";
import { SoukError, type SoukClient } from "./client.js";
import { h, replace } from "./dom.js";
import { heldSeat } from "./seats.js";

const STATUSES = ["open", "playing", "over", "cancelled"];
const PAGE = 20;

export interface Page {
  destroy(): void;
}

export function lobbyPage(root: HTMLElement, client: SoukClient, query: URLSearchParams): Page {
  let catalog: GameInfo[] = [];
  const filter = { game: query.get("game") ?? "", status: query.get("status") ?? "" };
  const list = h("div", { id: "games", "aria-live": "polite" });
  const more = h("div", { class: "more" });
  const filters = h("form", { id: "filters", class: "filters", "aria-label": "Filter the games" });
  const create = h("section", { class: "create", "aria-labelledby": "create-title" });
  let alive = true;

  replace(root, h("div", { id: "lobby" },
    h("header", { class: "top" }, h("h1", {}, "Souk"), h("p", {}, "Bazaar board games, live.")),
    h("div", { class: "lobby-grid" },
      h("section", { class: "games", "aria-labelledby": "games-title" },
        h("h2", { id: "games-title" }, "Games"), filters, list, more),
      create)));

  function drawFilters(): void {
    const gameSelect = h("select", { name: "game", id: "filter-game" },
      h("option", { value: "" }, "All games"),
      catalog.map((g) => h("option", { value: g.name, selected: g.name === filter.game }, g.title)));
    const statusSelect = h("select", { name: "status", id: "filter-status" },
      h("option", { value: "" }, "Any status"),
      STATUSES.map((s) => h("option", { value: s, selected: s === filter.status }, s)));
    const changed = () => {
      filter.game = gameSelect.value;
      filter.status = statusSelect.value;
      void load(null);
    };
    gameSelect.addEventListener("change", changed);
    statusSelect.addEventListener("change", changed);
    replace(filters, h("label", { for: "filter-game" }, "Game"), gameSelect,
      h("label", { for: "filter-status" }, "Status"), statusSelect);
  }

  function row(entry: LobbyEntry): HTMLElement {
    const held = heldSeat(entry.game_id);
    const free = entry.seats.filter((s) => s.name === null).length;
    const info = catalog.find((g) => g.name === entry.game);
    const action = held ? "Rejoin" : entry.status === "open" && free ? "Join" : "Watch";
    return h("li", { class: "game-row", "data-game-id": entry.game_id, "data-status": entry.status },
      h("div", { class: "game-main" },
        h("a", { href: `#/games/${entry.game_id}`, class: "game-title" }, entry.title),
        h("span", { class: "game-name" }, info?.title ?? entry.game),
        h("span", { class: `status status-${entry.status}` }, entry.status)),
      h("div", { class: "game-seats" }, entry.seats.map((s) =>
        h("span", { class: s.name === null ? "seat free" : "seat" }, s.name ?? "free"))),
      h("a", { class: "button", href: `#/games/${entry.game_id}`, "aria-label": `${action}: ${entry.title}` },
        action));
  }

  async function load(cursor: string | null): Promise<void> {
    try {
      const status = (filter.status || undefined) as LobbyQuery["status"];
      const page = await client.lobby({ game: filter.game || undefined, status, limit: PAGE,
                                        cursor: cursor ?? undefined });
      if (!alive) return;
      const rows = page.entries.map(row);
      if (cursor === null) {
        replace(list, rows.length ? h("ul", { class: "game-list" }, rows)
          : h("p", { class: "empty" }, "No game here yet: create one."));
      } else {
        list.querySelector("ul")?.append(...rows);
      }
      replace(more, page.next ? h("button", { type: "button", id: "more-games",
                                             onclick: () => void load(page.next) }, "More games") : null);
    } catch (error) {
      if (alive) replace(list, h("p", { class: "error", role: "alert" }, messageOf(error)));
    }
  }

  void (async () => {
    try {
      catalog = await client.catalog();
    } catch (error) {
      replace(create, h("p", { class: "error", role: "alert" }, messageOf(error)));
      return;
    }
    if (!alive) return;
    drawFilters();
    createForm(create, client, catalog, query.get("new") ?? "");
    await load(null);
  })();

  return { destroy: () => { alive = false; } };
}

/** The create form: the game, title, seats, the game's options (from the catalog, with their defaults), the
 * table's undo policy and clock; the server's refusal shown under it. */
function createForm(section: HTMLElement, client: SoukClient, catalog: GameInfo[], chosen: string): void {
  const form = h("form", { id: "create", novalidate: true });
  const error = h("p", { id: "create-error", class: "error", role: "alert" });
  const gameSelect = h("select", { name: "game", id: "create-game" },
    catalog.map((g) => h("option", { value: g.name, selected: g.name === chosen }, g.title)));
  const title = h("input", { name: "title", id: "create-title-input", required: true, maxlength: 200,
                             value: "A game at the souk" });
  const seats = h("input", { name: "seats", id: "create-seats", type: "number", required: true });
  const privateBox = h("input", { name: "private", id: "create-private", type: "checkbox" });
  const options = h("fieldset", { class: "options" });
  const clock = h("fieldset", { class: "options" });

  function info(): GameInfo {
    return catalog.find((g) => g.name === gameSelect.value) ?? catalog[0];
  }

  function drawOptions(): void {
    const game = info();
    seats.min = String(game.min_seats);
    seats.max = String(game.max_seats);
    seats.value = String(Math.min(game.max_seats, Math.max(game.min_seats, 3)));
    const own = Object.entries(game.options);
    if (!("undo" in game.options)) own.push(["undo", game.table.undo.default]);
    replace(options, h("legend", {}, `${game.title}: options`), own.map(([key, value]) =>
      optionInput(`opt-${key}`, key, value, key === "undo" ? game.table.undo.policies : null)));
    const d = game.table.clock.defaults;
    replace(clock, h("legend", {}, "Clock (seconds; 0: none)"),
      optionInput("clock-per_decision", "per decision", d.per_decision ?? 0, null),
      optionInput("clock-reserve", "reserve", d.reserve ?? 0, null),
      optionInput("clock-increment", "increment", d.increment ?? 0, null),
      optionInput("clock-on_timeout", "on timeout", d.on_timeout ?? "bot", game.table.clock.policies));
  }

  gameSelect.addEventListener("change", drawOptions);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });

  async function submit(): Promise<void> {
    const game = info();
    const chosen: Record<string, unknown> = {};
    for (const key of Object.keys(game.options).concat("undo")) {
      const input = form.elements.namedItem(`opt-${key}`);
      if (input) chosen[key] = readInput(input as HTMLInputElement | HTMLSelectElement, game.options[key]);
    }
    const defaults = game.table.clock.defaults as unknown as Record<string, unknown>;
    const clockOptions: Record<string, unknown> = {};
    let anyClock = false;
    for (const key of ["per_decision", "reserve", "increment", "on_timeout"]) {
      const input = form.elements.namedItem(`clock-${key}`) as HTMLInputElement | HTMLSelectElement;
      clockOptions[key] = readInput(input, defaults[key]);
      if (clockOptions[key] !== defaults[key]) anyClock = true;
    }
    if (anyClock) chosen.clock = clockOptions;
    const button = form.querySelector("button[type=submit]") as HTMLButtonElement;
    button.disabled = true;
    error.textContent = "";
    try {
      const created = await client.create({ game: game.name, title: title.value, seats: Number(seats.value),
                                            options: chosen, private: privateBox.checked });
      location.hash = `#/games/${created.game_id}` + (created.invite_code ? `?invite=${created.invite_code}` : "");
    } catch (exc) {
      error.textContent = messageOf(exc);
      button.disabled = false;
    }
  }

  drawOptions();
  replace(form,
    field("create-game", "Game", gameSelect),
    field("create-title-input", "Title", title),
    field("create-seats", "Seats", seats),
    options, clock,
    h("div", { class: "field check" }, privateBox, h("label", { for: "create-private" }, "Private (by invite)")),
    h("button", { type: "submit", class: "primary" }, "Create the game"),
    error);
  replace(section, h("h2", { id: "create-title" }, "New game"), form);
}

function field(id: string, label: string, input: HTMLElement): HTMLElement {
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

function optionInput(name: string, label: string, value: unknown, choices: readonly string[] | null): HTMLElement {
  const id = `f-${name}`;
  if (choices) {
    return field(id, label, h("select", { name, id },
      choices.map((c) => h("option", { value: c, selected: c === value }, c))));
  }
  if (typeof value === "boolean") {
    return h("div", { class: "field check" }, h("input", { type: "checkbox", name, id, checked: value }),
      h("label", { for: id }, label));
  }
  if (typeof value === "number") {
    return field(id, label, h("input", { type: "number", name, id, value, step: Number.isInteger(value) ? 1 : "any",
                                          min: 0 }));
  }
  return field(id, label, h("input", { name, id, value: typeof value === "string" ? value : JSON.stringify(value) }));
}

function readInput(input: HTMLInputElement | HTMLSelectElement, fallback: unknown): unknown {
  if (input instanceof HTMLInputElement && input.type === "checkbox") return input.checked;
  if (typeof fallback === "number") {
    const n = Number(input.value);
    return input.value.trim() === "" || Number.isNaN(n) ? input.value : n;
  }
  if (typeof fallback === "string" || fallback === undefined) return input.value;
  try {
    return JSON.parse(input.value) as unknown;
  } catch {
    return input.value;
  }
}

export function messageOf(error: unknown): string {
  // a SoukError's message is "status code: sentence"
  if (error instanceof SoukError) return error.message.replace(/^\d+ ([\w.]+): (.*)$/s, "$2 ($1)");
  return error instanceof Error ? error.message : String(error);
}
