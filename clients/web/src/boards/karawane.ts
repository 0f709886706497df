// 1001 Karawane's board: the desert as this seat knows it. The 8x8 rhombus of hexes (DATA.md K-1) is drawn with
// flat-topped hexes so that it stands upright at a phone's width: the known sector (sand, with the home city in its
// corner), the three coloured sectors whose hexes lie face down (their backs' colours; a genie's swap is public),
// the hexes turned face up by a map token, and the ones this seat looked at (their kinds inside `data-secret`:
// nobody else knows them). The caravans stand on their hexes; the active caravan's path this turn is traced.
// Beside the desert: the thief card of the round, this seat's hand (`data-secret`), every caravan's public state
// (cards in hand, gold and artifacts carried, what is laid out at home, tokens), the supply, the clues the places
// gave away, and the result at the end.
//
// Legal commands sit where the physical game has them: a step is the neighbouring hex itself ("ride"), stopping
// is the caravan's own hex, a token is laid on a face-down hex (a map or a genie chip on each hex it may go to),
// the genie's second hex is the hex itself; equipment is taken from the equipment piles; the places crossed this
// turn (trade, artifact, water, drivers) and the desert's law are on the turn's panel; artifacts are bought at
// home. Every command of `legal` is one button, all shown at once.
//
// Data the view does not carry (the board's shape, names) mirror domain/karawane/data.py.
import type { karawane } from "souk-client";
import type { Board, BoardProps } from "./types.js";
import { choiceList } from "./choices.js";

type View = karawane.KarawaneView;
type Hex = karawane.HexView;
type Player = karawane.PlayerView;
type Command = karawane.Command;

// --- the game's data (domain/karawane/data.py) -----------------------------------------------------------

const SIZE = 8;
const ARTIFACTS = ["carpet", "amulet", "lamp"];
const ARTIFACT_NAMES: Record<string, string> = { carpet: "flying carpet", amulet: "amulet", lamp: "wonderful lamp" };
const ARTIFACT_PLACE: Record<string, string> = { carpet: "tower", amulet: "mausoleum", lamp: "ruins" };
const KIND_NAMES: Record<string, string> = {
  desert: "desert", city: "desert city", oasis: "oasis", caravanserai: "caravanserai",
  tower: "tower", mausoleum: "mausoleum", ruins: "ruins",
};
const SECTOR_NAMES: Record<string, string> = { known: "known sector", red: "red sector", blue: "blue sector", green: "green sector" };
// What the active seat is doing, by the turn's stage: [said to this seat, said of another].
const PHASES: Record<string, [string, string]> = {
  setup: ["are setting up", "is setting up"], equip: ["equip your caravan at home", "equips at home"],
  move: ["may ride (and lay a token)", "may ride (and lay a token)"], genie: ["pick the genie's second hex", "picks the genie's second hex"],
  moving: ["are on the move", "is on the move"], desert: ["face the desert", "faces the desert"],
  home: ["are at home", "is at home"], after: ["end the turn", "ends the turn"], ended: ["wait", "waits"],
};
// A hex's kind as written on the hex (soft hyphens where a phone's narrow hexes break the word).
const ON_HEX: Record<string, string> = { caravanserai: "caravan\u00adserai", city: "city" };
const MOVE = 3;
const HAND_LIMIT = 6;

// --- drawing helpers -------------------------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** A small drawing of a hex's kind (or an artifact, the home city), from static shapes. */
function icon(name: string, cls = "kar-icon"): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `${cls} kar-icon-${name}`);
  svg.setAttribute("aria-hidden", "true");
  for (const [tag, attrs] of ICONS[name] ?? []) {
    const shape = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) shape.setAttribute(k, v);
    svg.appendChild(shape);
  }
  return svg;
}

type Shape = [string, Record<string, string>];
const ICONS: Record<string, Shape[]> = {
  desert: [["path", { d: "M2 17 Q7 11 12 16 T22 14 V20 H2Z", fill: "#d9b36c" }]],
  city: [
    ["rect", { x: "3", y: "11", width: "18", height: "10", fill: "#f3e7c9", stroke: "#7a5a2b" }],
    ["path", { d: "M6 11 Q9 5 12 11 Z M12 11 Q15 5 18 11 Z", fill: "#e0a84a", stroke: "#7a5a2b" }],
    ["rect", { x: "10", y: "15", width: "4", height: "6", fill: "#7a5a2b" }],
  ],
  home: [
    ["rect", { x: "2", y: "10", width: "20", height: "11", fill: "#fff6df", stroke: "#6b3d12" }],
    ["path", { d: "M4 10 Q8 2 12 10 Z M12 10 Q16 2 20 10 Z", fill: "#c8102e", stroke: "#6b3d12" }],
    ["path", { d: "M12 3 V0.5 L16 2 Z", fill: "#c8102e" }],
    ["rect", { x: "10", y: "14", width: "4", height: "7", fill: "#6b3d12" }],
  ],
  oasis: [
    ["ellipse", { cx: "12", cy: "19", rx: "9", ry: "3", fill: "#3f8fd2" }],
    ["path", { d: "M12 18 Q13 11 11 7", stroke: "#6b4a22", "stroke-width": "1.6", fill: "none" }],
    ["path", { d: "M11 7 Q5 5 3 9 Q7 6 11 7 Q9 2 15 2 Q12 4 11 7 Q17 4 21 8 Q15 6 11 7", fill: "#2e8b3a" }],
  ],
  caravanserai: [
    ["path", { d: "M3 21 V11 L12 5 L21 11 V21 Z", fill: "#e8c48a", stroke: "#7a5a2b" }],
    ["path", { d: "M9 21 V15 Q12 11 15 15 V21 Z", fill: "#5a3d1c" }],
  ],
  tower: [
    ["path", { d: "M8 21 L9 7 H15 L16 21 Z", fill: "#b24a3a", stroke: "#5c1f15" }],
    ["path", { d: "M8 7 L12 2 L16 7 Z", fill: "#e3b34a", stroke: "#5c1f15" }],
  ],
  mausoleum: [
    ["rect", { x: "4", y: "12", width: "16", height: "9", fill: "#dfe9f5", stroke: "#2c4a78" }],
    ["path", { d: "M6 12 Q12 1 18 12 Z", fill: "#4a78c0", stroke: "#2c4a78" }],
  ],
  ruins: [
    ["rect", { x: "4", y: "9", width: "3", height: "12", fill: "#b8b09a", stroke: "#4d4a3a" }],
    ["rect", { x: "10.5", y: "13", width: "3", height: "8", fill: "#b8b09a", stroke: "#4d4a3a" }],
    ["rect", { x: "17", y: "7", width: "3", height: "14", fill: "#b8b09a", stroke: "#4d4a3a" }],
    ["path", { d: "M3 21 H21", stroke: "#4d4a3a", "stroke-width": "1.5" }],
  ],
  carpet: [
    ["path", { d: "M3 9 Q8 5 12 9 T21 9 L21 16 Q16 12 12 16 T3 16 Z", fill: "#b0243a", stroke: "#e3b34a" }],
  ],
  amulet: [
    ["path", { d: "M6 3 L12 11 L18 3", stroke: "#8a6d2b", fill: "none" }],
    ["circle", { cx: "12", cy: "15", r: "6", fill: "#2c6fb0", stroke: "#e3b34a", "stroke-width": "2" }],
  ],
  lamp: [
    ["path", { d: "M3 14 Q6 18 12 18 Q18 18 19 13 L23 10 L18 12 Q12 9 6 12 Z", fill: "#e3b34a", stroke: "#7a5a2b" }],
    ["path", { d: "M11 10 Q12 6 13 10", fill: "#e3b34a", stroke: "#7a5a2b" }],
  ],
  map: [
    ["path", { d: "M3 5 L9 3 L15 5 L21 3 V19 L15 21 L9 19 L3 21 Z", fill: "#f3e7c9", stroke: "#6b4a22" }],
    ["path", { d: "M9 3 V19 M15 5 V21", stroke: "#6b4a22" }],
  ],
  genie: [
    ["path", { d: "M12 21 Q4 17 10 12 Q6 8 12 4 Q18 8 14 12 Q20 17 12 21 Z", fill: "#7b4fc0", stroke: "#3d2560" }],
    ["circle", { cx: "12", cy: "7", r: "2", fill: "#e3b34a" }],
  ],
  camel: [
    ["path", { d: "M3 12 Q4 8 6 9 Q8 5 10 9 Q12 5 15 9 L18 9 L19 6 L21 7 L20 11 L18 12 L18 20 H16 V14 H8 V20 H6 V13 Z",
      fill: "currentColor", stroke: "#222", "stroke-width": "0.8" }],
  ],
  skin: [
    ["path", { d: "M9 3 H15 V6 Q20 9 19 15 Q18 21 12 21 Q6 21 5 15 Q4 9 9 6 Z", fill: "#8a5a2b", stroke: "#4a2e12" }],
  ],
  goods: [
    ["rect", { x: "4", y: "8", width: "16", height: "12", fill: "#c9a36a", stroke: "#5c4220" }],
    ["path", { d: "M4 8 L8 4 H16 L20 8 M12 8 V20", stroke: "#5c4220", fill: "none" }],
  ],
  gold: [
    ["circle", { cx: "12", cy: "12", r: "8", fill: "#f2c230", stroke: "#8a6d12", "stroke-width": "1.5" }],
    ["path", { d: "M12 7 V17", stroke: "#8a6d12", "stroke-width": "1.5" }],
  ],
  thief: [
    ["circle", { cx: "12", cy: "8", r: "5", fill: "#222" }],
    ["rect", { x: "7", y: "7", width: "10", height: "2", fill: "#f3e7c9" }],
    ["path", { d: "M4 22 Q5 13 12 13 Q19 13 20 22 Z", fill: "#222" }],
  ],
};

/** A cell's name as the board's edge letters it: column A-H (q), row 1-8 (r). */
function cellName(cell: number): string {
  return `${"ABCDEFGH"[cell % SIZE]}${Math.floor(cell / SIZE) + 1}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function nameOf(names: readonly string[], seat: number): string {
  return names[seat] || `Seat ${seat + 1}`;
}

// --- the board -------------------------------------------------------------------------------------------

interface Legal { command: Command; index: number }

/** A button for legal command `index`: its text, its aria-label (what it does in the game's words). */
function button(props: BoardProps, index: number, text: string, label: string, cls = "kar-btn"): HTMLButtonElement {
  const b = el("button", cls, text);
  b.type = "button";
  b.dataset.legal = String(index);
  b.setAttribute("aria-label", label);
  b.title = label;
  b.addEventListener("click", () => props.play(index));
  return b;
}

/** A cell as this seat knows it, with its article: "the oasis at C2", "a face-down red hex at D1". */
function describeCell(view: View, cell: number, hex: Hex | undefined): string {
  if (cell === view.home) return `the home city (${cellName(cell)})`;
  if (!hex) return `the known desert at ${cellName(cell)}`;
  const kind = hex.kind ? `the ${KIND_NAMES[hex.kind] ?? hex.kind}` : `a face-down ${hex.back} hex`;
  return `${kind} at ${cellName(cell)}`;
}

function render(root: HTMLElement, props: BoardProps): void {
  const table = props.table;
  const view = table.view as View | null;
  const wrap = el("div", "kar");
  root.appendChild(wrap);
  if (!view || !Array.isArray(view.hexes)) {
    wrap.appendChild(el("p", "kar-note", "The caravans are being readied."));
    return;
  }
  const legal: Legal[] = (table.legal as Command[]).map((command, index) => ({ command, index }));
  const of = <T extends Command["type"]>(type: T) =>
    legal.filter((l) => l.command.type === type) as { command: Extract<Command, { type: T }>; index: number }[];

  wrap.appendChild(header(view, props));
  const main = el("div", "kar-main");
  wrap.appendChild(main);
  main.appendChild(desert(view, props, of));
  const side = el("div", "kar-side");
  main.appendChild(side);
  if (view.scores) side.appendChild(finalScores(view, props));
  const turn = turnPanel(view, props, of);
  if (turn) side.appendChild(turn);
  if (view.you) side.appendChild(hand(view.you));
  side.appendChild(caravans(view, props));
  side.appendChild(supply(view));
  side.appendChild(clues(view, props));
}

function header(view: View, props: BoardProps): HTMLElement {
  const head = el("div", "kar-head");
  head.appendChild(el("span", "kar-round", `Round ${view.round}`));
  const thief = el("span", "kar-thief-card");
  thief.appendChild(icon("thief"));
  thief.appendChild(el("span", "", view.thieves === null ? "No thief card turned" : `Thieves: ${view.thieves}`));
  thief.setAttribute("aria-label", view.thieves === null ? "no thief card turned yet" : `the thief card shows ${plural(view.thieves, "thief", "thieves")}`);
  head.appendChild(thief);
  if (view.active !== null && view.phase !== "over") {
    const you = view.active === props.table.seat;
    const doing = PHASES[view.phase]?.[you ? 0 : 1] ?? view.phase;
    head.appendChild(el("span", `kar-whose kar-seat-${view.active}`, `${you ? "You" : nameOf(props.names, view.active)} ${doing}`));
  } else if (view.phase === "over") {
    head.appendChild(el("span", "kar-whose", "The caravans are home: game over"));
  }
  if (view.first !== null) head.appendChild(el("span", "kar-first", `First player: ${nameOf(props.names, view.first)}`));
  if (view.ending && view.phase !== "over") head.appendChild(el("span", "kar-ending", "Last round: a caravan has all three artifacts"));
  return head;
}

type Of = <T extends Command["type"]>(type: T) => { command: Extract<Command, { type: T }>; index: number }[];

function desert(view: View, props: BoardProps, of: Of): HTMLElement {
  const box = el("section", "kar-desert");
  box.setAttribute("aria-label", "the desert");
  const hexes = new Map<number, Hex>(view.hexes.map((h) => [h.cell, h]));
  const known = new Set(view.known);
  const steps = new Map(of("karawane.Step").map((l) => [l.command.to, l.index]));
  const swaps = new Map(of("karawane.SwapWith").map((l) => [l.command.hex, l.index]));
  const maps = new Map(of("karawane.PlayMap").map((l) => [l.command.hex, l.index]));
  const genies = new Map(of("karawane.PlayGenie").map((l) => [l.command.hex, l.index]));
  const stop = of("karawane.StopMoving")[0];
  const path = view.turn?.path ?? [];
  const here = new Map<number, Player[]>();
  for (const p of view.players) if (p.cell !== null) here.set(p.cell, [...(here.get(p.cell) ?? []), p]);
  const activeCell = view.active !== null ? view.players[view.active]?.cell ?? null : null;
  const clued = new Map<number, number>();
  for (const c of view.clues) for (const cell of c.cells) clued.set(cell, (clued.get(cell) ?? 0) + 1);
  const mine = props.table.seat;

  for (let r = 0; r < SIZE; r++) {
    for (let q = 0; q < SIZE; q++) {
      const cell = q + SIZE * r;
      const hex = hexes.get(cell);
      if (!hex && !known.has(cell) && cell !== view.home) continue;
      const tile = el("div", "kar-hex");
      tile.dataset.cell = String(cell);
      // Flat-topped hexes: x = 0.75 q, y = r + q / 2 (in hex widths / heights); 6.25 widths by 11.5 heights.
      tile.style.left = `${(0.75 * q / 6.25) * 100}%`;
      tile.style.top = `${((r + q / 2) / 11.5) * 100}%`;
      if (cell === view.home) {
        tile.classList.add("kar-home");
        tile.appendChild(icon("home"));
        tile.appendChild(el("span", "kar-kind", "Home"));
      } else if (!hex) {
        tile.classList.add("kar-known");
      } else {
        tile.classList.add(`kar-back-${hex.back}`, `kar-sector-${hex.sector}`);
        if (hex.face_up) {
          tile.classList.add("kar-face-up");
          if (hex.kind) {
            tile.dataset.kind = hex.kind;
            tile.appendChild(icon(hex.kind));
            if (hex.kind !== "desert") tile.appendChild(el("span", "kar-kind", ON_HEX[hex.kind] ?? KIND_NAMES[hex.kind] ?? hex.kind));
          }
        } else if (hex.kind) {
          // Looked at by this seat only: its secret.
          tile.classList.add("kar-looked");
          const seen = el("span", "kar-seen");
          seen.dataset.secret = "";
          seen.dataset.kind = hex.kind;
          seen.appendChild(icon(hex.kind));
          if (hex.kind !== "desert") seen.appendChild(el("span", "kar-kind", ON_HEX[hex.kind] ?? KIND_NAMES[hex.kind] ?? hex.kind));
          tile.appendChild(seen);
        }
      }
      tile.appendChild(el("span", "kar-coord", cellName(cell)));
      if (path.includes(cell)) tile.classList.add("kar-path");
      if (view.turn?.genie === cell) tile.classList.add("kar-genie-pick");
      const n = clued.get(cell);
      if (n) {
        const mark = el("span", "kar-clue-mark", "?".repeat(Math.min(n, 3)));
        mark.title = `${plural(n, "clue")} name this hex`;
        tile.appendChild(mark);
      }
      const standing = here.get(cell) ?? [];
      if (standing.length) {
        const group = el("span", "kar-caravans");
        for (const p of standing) {
          const c = el("span", `kar-caravan kar-seat-${p.seat}`);
          c.dataset.caravan = String(p.seat);
          c.appendChild(icon("camel", "kar-camel"));
          c.title = `${nameOf(props.names, p.seat)}'s caravan`;
          group.appendChild(c);
        }
        tile.appendChild(group);
        tile.classList.add("kar-has-caravan");
      }
      const where = describeCell(view, cell, hex);
      if (steps.has(cell)) {
        tile.classList.add("kar-can-step");
        tile.appendChild(button(props, steps.get(cell)!, "Ride", `Ride the caravan to ${where}`, "kar-hex-btn"));
      } else if (swaps.has(cell)) {
        tile.classList.add("kar-can-swap");
        tile.appendChild(button(props, swaps.get(cell)!, "Swap", `The genie swaps ${where} with the hex at ${cellName(view.turn?.genie ?? 0)}`, "kar-hex-btn"));
      } else if (stop && cell === activeCell) {
        tile.appendChild(button(props, stop.index, "Stop", `Stop the caravan here (${where})`, "kar-hex-btn kar-stop"));
      }
      if (maps.has(cell) || genies.has(cell)) {
        const chips = el("span", "kar-chips");
        if (maps.has(cell)) {
          const b = button(props, maps.get(cell)!, "", `Map token: turn ${where} face up`, "kar-chip kar-chip-map");
          b.appendChild(icon("map"));
          chips.appendChild(b);
        }
        if (genies.has(cell)) {
          const b = button(props, genies.get(cell)!, "", `Genie token: swap ${where} with another face-down hex`, "kar-chip kar-chip-genie");
          b.appendChild(icon("genie"));
          chips.appendChild(b);
        }
        tile.appendChild(chips);
      }
      tile.setAttribute("role", "group");
      tile.setAttribute("aria-label", where + (standing.length ? `, caravans: ${standing.map((p) => nameOf(props.names, p.seat)).join(", ")}` : ""));
      if (mine !== null && standing.some((p) => p.seat === mine)) tile.classList.add("kar-mine");
      box.appendChild(tile);
    }
  }
  return box;
}

function turnPanel(view: View, props: BoardProps, of: Of): HTMLElement | null {
  const seat = props.table.seat;
  if (seat === null || !props.table.legal.length) return null;
  const panel = el("section", "kar-panel kar-turn");
  panel.appendChild(el("h3", "", "Your turn"));
  const t = view.turn;
  if (t && t.seat === seat) {
    const facts: string[] = [];
    if (view.phase === "move" || view.phase === "moving") facts.push(`${plural(MOVE - t.path.length, "step")} left`);
    if (t.token) facts.push("token played");
    if (t.traded) facts.push(`${plural(t.traded, "good")} traded`);
    if (t.path.length) facts.push(`path: ${t.path.map(cellName).join(" → ")}`);
    if (facts.length) panel.appendChild(el("p", "kar-note", facts.join(" · ")));
  }
  if (view.phase === "move" || view.phase === "moving") {
    panel.appendChild(el("p", "kar-hint", "Click a neighbouring hex to ride there; lay a token with the map or genie chips on a face-down hex."));
  }
  if (view.phase === "genie") panel.appendChild(el("p", "kar-hint", "Pick the second face-down hex for the genie to swap."));

  const equips = of("karawane.Equip");
  if (equips.length) {
    const piles = el("div", "kar-equip");
    piles.appendChild(el("h4", "", "The equipment piles: take up to 6 cards"));
    // Up to 84 ways to take them: a group per number of camel drivers (the index), and a filter per kind of card
    // (boards/choices.ts): "2 water skins, 2 goods cards" leaves one button a group. Every choice still shows.
    const byDrivers = new Map<number, HTMLElement[]>();
    for (const l of equips) {
      const c = l.command as karawane.Equip;
      const d = c.camel_drivers ?? 0, w = c.water_skins ?? 0, g = c.goods ?? 0;
      const words = [d && plural(d, "camel driver"), w && plural(w, "water skin"), g && plural(g, "goods card")].filter(Boolean);
      const b = button(props, l.index, "", words.length ? `Take ${words.join(", ")}` : "Take no equipment", "kar-btn kar-equip-btn");
      if (!words.length) b.textContent = "Take nothing";
      for (const [n, kind] of [[d, "camel"], [w, "skin"], [g, "goods"]] as [number, string][]) {
        if (!n) continue;
        const part = el("span", "kar-equip-part", String(n));
        part.appendChild(icon(kind));
        b.appendChild(part);
      }
      b.dataset.facetSkins = String(w);
      b.dataset.facetGoods = String(g);
      b.dataset.facetTotal = String(d + w + g);
      byDrivers.set(d, [...(byDrivers.get(d) ?? []), b]);
    }
    const counts = (name: string) => [...new Set(equips.map((l) => {
      const c = l.command as karawane.Equip;
      return name === "skins" ? c.water_skins ?? 0 : name === "goods" ? c.goods ?? 0
        : (c.camel_drivers ?? 0) + (c.water_skins ?? 0) + (c.goods ?? 0);
    }))].sort((a, b) => a - b).map(String);
    const groups = [...byDrivers.keys()].sort((a, b) => a - b).map((d) => ({
      key: String(d), heading: d === 0 ? "no camel driver" : plural(d, "camel driver"), buttons: byDrivers.get(d)!,
    }));
    piles.appendChild(choiceList(groups, {
      key: "kar-equip", label: "The equipment to take", decision: JSON.stringify(equips.map((l) => l.command)),
      facets: [{ name: "skins", label: "water skins", values: counts("skins") },
               { name: "goods", label: "goods cards", values: counts("goods") },
               { name: "total", label: "cards in all", values: counts("total") }],
      groupClass: "kar-equip-row", headClass: "kar-equip-total",
    }));
    panel.appendChild(piles);
  }

  const places = el("div", "kar-places");
  for (const l of of("karawane.Trade")) {
    places.appendChild(button(props, l.index, `Desert city: trade ${plural(l.command.goods, "good")} for ${l.command.goods} gold`,
      `At the desert city: trade ${plural(l.command.goods, "goods card")} for ${plural(l.command.goods, "1-gold card")}`));
  }
  for (const l of of("karawane.TakeArtifact")) {
    const a = l.command.artifact;
    const b = button(props, l.index, `${KIND_NAMES[ARTIFACT_PLACE[a]]}: take the ${ARTIFACT_NAMES[a] ?? a}`,
      `At the ${KIND_NAMES[ARTIFACT_PLACE[a]]}: take the ${ARTIFACT_NAMES[a] ?? a}`);
    b.prepend(icon(a));
    places.appendChild(b);
  }
  for (const l of of("karawane.BuyWater")) {
    places.appendChild(button(props, l.index, `Oasis: 1 gold for ${plural(l.command.count, "water skin")}`,
      `At the oasis: pay 1 gold for ${plural(l.command.count, "water skin")}`));
  }
  for (const l of of("karawane.HireDrivers")) {
    places.appendChild(button(props, l.index, `Caravanserai: 1 gold for ${plural(l.command.count, "camel driver")}`,
      `At the caravanserai: pay 1 gold for ${plural(l.command.count, "camel driver")}`));
  }
  if (places.childElementCount) {
    places.prepend(el("h4", "", "Places crossed this turn"));
    panel.appendChild(places);
  }

  const supplies = of("karawane.Supply");
  if (supplies.length) {
    const law = el("div", "kar-law");
    law.appendChild(el("h4", "", `The desert's law: water, and ${view.thieves ? plural(view.thieves, "thief", "thieves") : "no thieves"}`));
    const WATER: Record<string, string> = { oasis: "water at the oasis", skin: "give a water skin" };
    const GUARD: Record<string, string> = {
      clear: "no thieves about", show: "show your camel drivers", driver: "give a camel driver",
      caravanserai: "shelter at the caravanserai",
    };
    for (const l of supplies) {
      const { water, thieves } = l.command;
      if (!water || !thieves) {
        const why = !water ? "no water" : "no guard against the thieves";
        law.appendChild(button(props, l.index, `Caravan lost (${why})`,
          `The caravan is not in order (${why}): it is lost with its whole hand`, "kar-btn kar-lost"));
      } else {
        law.appendChild(button(props, l.index, `${WATER[water] ?? water}; ${GUARD[thieves] ?? thieves}`,
          `Supply the caravan: ${WATER[water] ?? water}, ${GUARD[thieves] ?? thieves}`));
      }
    }
    panel.appendChild(law);
  }

  const buys = of("karawane.BuyArtifact");
  if (buys.length) {
    const bazaar = el("div", "kar-bazaar");
    bazaar.appendChild(el("h4", "", "At home: buy an artifact for 5 gold"));
    for (const l of buys) {
      const a = l.command.artifact;
      const b = button(props, l.index, `Buy the ${ARTIFACT_NAMES[a] ?? a}`, `Buy the ${ARTIFACT_NAMES[a] ?? a} for 5 gold laid out`);
      b.prepend(icon(a));
      bazaar.appendChild(b);
    }
    panel.appendChild(bazaar);
  }
  for (const l of of("karawane.EndTurn")) panel.appendChild(button(props, l.index, "End the turn", "End the turn", "kar-btn kar-end"));
  return panel;
}

function hand(you: karawane.HandView): HTMLElement {
  const panel = el("section", "kar-panel kar-hand");
  panel.dataset.secret = "";
  const total = you.camel_drivers + you.water_skins + you.goods + you.gold + you.artifacts.length;
  panel.appendChild(el("h3", "", `Your hand (${total} of ${HAND_LIMIT})`));
  const cards = el("div", "kar-cards");
  const kinds: [string, number, string][] = [
    ["camel", you.camel_drivers, "camel driver"], ["skin", you.water_skins, "water skin"],
    ["goods", you.goods, "goods card"], ["gold", you.gold, "1-gold card"],
  ];
  for (const [kind, n, word] of kinds) {
    const card = el("span", `kar-card kar-card-${kind}`);
    card.dataset.card = kind;
    card.dataset.count = String(n);
    card.appendChild(icon(kind));
    card.appendChild(el("span", "kar-card-n", String(n)));
    card.setAttribute("aria-label", plural(n, word));
    card.title = plural(n, word);
    cards.appendChild(card);
  }
  for (const a of you.artifacts) {
    const card = el("span", "kar-card kar-card-artifact");
    card.dataset.card = a;
    card.appendChild(icon(a));
    card.appendChild(el("span", "kar-card-n", ARTIFACT_NAMES[a] ?? a));
    cards.appendChild(card);
  }
  panel.appendChild(cards);
  return panel;
}

function caravans(view: View, props: BoardProps): HTMLElement {
  const panel = el("section", "kar-panel kar-players");
  panel.appendChild(el("h3", "", "The caravans"));
  const awaited = new Set(view.awaiting);
  for (const p of view.players) {
    const row = el("div", `kar-player kar-seat-${p.seat}`);
    row.dataset.player = String(p.seat);
    if (awaited.has(p.seat)) row.classList.add("kar-awaited");
    const name = el("div", "kar-player-name");
    const token = el("span", `kar-caravan kar-seat-${p.seat}`);
    token.appendChild(icon("camel", "kar-camel"));
    name.appendChild(token);
    name.appendChild(el("strong", "", nameOf(props.names, p.seat) + (p.seat === props.table.seat ? " (you)" : "")));
    const where = p.lost ? "lost in the desert" : p.cell === null ? "—" : p.cell === view.home ? "at home"
      : `at ${cellName(p.cell)}${view.known.includes(p.cell) ? " (known sector)" : ""}`;
    name.appendChild(el("span", "kar-where", where));
    row.appendChild(name);
    const facts = el("div", "kar-facts");
    facts.appendChild(el("span", "", `${plural(p.hand, "card")} in hand`));
    if (p.gold_in_hand) facts.appendChild(el("span", "", `${p.gold_in_hand} gold carried`));
    for (const a of p.artifacts_in_hand) {
      const s = el("span", "kar-carried", `carries the ${ARTIFACT_NAMES[a] ?? a}`);
      s.prepend(icon(a));
      facts.appendChild(s);
    }
    facts.appendChild(el("span", "", `${plural(p.tokens, "token")} left`));
    row.appendChild(facts);
    const home = el("div", "kar-laid");
    home.appendChild(el("span", "kar-label", "At home:"));
    const gold = el("span", "kar-gold", `${p.gold} gold`);
    gold.prepend(icon("gold"));
    gold.title = `${plural(p.gold_ones, "1-gold card")}, ${plural(p.gold_threes, "3-gold card")}`;
    home.appendChild(gold);
    for (const a of ARTIFACTS) {
      const has = p.artifacts.includes(a);
      const s = el("span", `kar-artifact ${has ? "kar-has" : "kar-missing"}`);
      s.appendChild(icon(a));
      s.setAttribute("aria-label", `${ARTIFACT_NAMES[a]}: ${has ? "laid out" : "not yet"}`);
      s.title = `${ARTIFACT_NAMES[a]}${has ? "" : " (not yet)"}`;
      home.appendChild(s);
    }
    row.appendChild(home);
    panel.appendChild(row);
  }
  return panel;
}

function supply(view: View): HTMLElement {
  const s = view.supply;
  const panel = el("section", "kar-panel kar-supply");
  panel.appendChild(el("h3", "", "The supply"));
  const list = el("div", "kar-facts");
  list.appendChild(el("span", "", `${plural(s.equipment, "equipment card")}`));
  list.appendChild(el("span", "", `gold: ${s.gold_ones} × 1, ${s.gold_threes} × 3`));
  for (const a of ARTIFACTS) {
    const item = el("span", "kar-carried", `${s.artifacts[a] ?? 0} ${ARTIFACT_NAMES[a]}`);
    item.prepend(icon(a));
    list.appendChild(item);
  }
  list.appendChild(el("span", "", `${plural(s.thief_cards, "thief card")} not turned`));
  panel.appendChild(list);
  return panel;
}

function clues(view: View, props: BoardProps): HTMLElement {
  const panel = el("section", "kar-panel kar-clues");
  panel.appendChild(el("h3", "", "Clues"));
  if (!view.clues.length) {
    panel.appendChild(el("p", "kar-note", "No place has been used yet."));
    return panel;
  }
  const list = el("ol", "kar-clue-list");
  for (const c of [...view.clues].reverse().slice(0, 12)) {
    const kind = KIND_NAMES[c.kind] ?? c.kind;
    list.appendChild(el("li", "", `Round ${c.round}, ${nameOf(props.names, c.seat)}: a${/^[aeiou]/.test(kind) ? "n" : ""} ${kind}${c.face_down ? " (face down)" : ""} among ${c.cells.map(cellName).join(", ")}`));
  }
  panel.appendChild(list);
  return panel;
}

function finalScores(view: View, props: BoardProps): HTMLElement {
  const panel = el("section", "kar-panel kar-final");
  panel.appendChild(el("h3", "", "The journey's end"));
  const winners = new Set(view.winners ?? []);
  const list = el("ol", "kar-scores");
  (view.scores ?? []).forEach((s, seat) => {
    const li = el("li", winners.has(seat) ? "kar-winner" : "");
    li.dataset.seat = String(seat);
    const arts = s.artifacts.length === 3 ? "all three artifacts" : `${plural(s.artifacts.length, "artifact")}`;
    li.textContent = `${nameOf(props.names, seat)}: ${s.gold} gold, ${arts}${winners.has(seat) ? " — wins" : ""}`;
    list.appendChild(li);
  });
  panel.appendChild(list);
  return panel;
}

export const board: Board = { title: "1001 Karawane", render };
