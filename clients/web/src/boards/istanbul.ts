// Istanbul: Choose & Write's board: each seat's score sheet as the pad looks (the 18 places of the bazaar with
// their action icons and upgrade squares, the lira track, the four goods rows with their ruby-bonus columns, the
// bonus actions, the amulet and rings of rubies), and the table between the sheets: the two face-up location
// cards, the location deck, the card played this turn, the caravan card, the Sultan's palace (A-D) with each ruby's
// price, the decks, a fountain waiting for choices. This seat's hand (location, guild and goods cards, its secret
// answer) is drawn inside `data-secret`; the other seats' cards are counts.
//
// Legal commands sit where the game has them: "play" on the face-up cards and on the hand's cards, "take" on the
// face-up cards and the deck after a card from the hand, the guild cards' "pay and play" on the cards, the
// answers to the played card on this seat's sheet, grouped by place (each place's cell on the map is marked and
// names how many ways it offers), "take a bonus action instead" on the bonus-action row, a fountain's choices on
// the fountain, the guild card to keep on the two cards. Every command of `legal` is one button, all at once.
//
// Data the view does not carry (names, effects, icon counts per sheet side) mirror domain/istanbul/data.py.
import type { istanbul } from "souk-client";
import type { Board, BoardProps } from "./types.js";
import { choiceList, type ChoiceGroup } from "./choices.js";

type View = istanbul.IstanbulView;
type Sheet = istanbul.SheetView;
type Command = istanbul.Command;
type Act = istanbul.Act;

// --- the game's data (domain/istanbul/data.py) -----------------------------------------------------------

const LOCATIONS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "A", "B", "C", "D"];
const LETTERS = ["A", "B", "C", "D"];
const GOODS = ["fabric", "spice", "fruit", "jewelry"];
const FOUNTAINS = ["lira", "good", "goods_card", "upgrade"];
const NAMES: Record<string, string> = {
  "1": "Fabric Warehouse", "2": "Gem Merchant", "3": "Great Market", "4": "Post Office", "5": "Spice Warehouse",
  "6": "Caravanserai", "7": "Coffee Roaster", "8": "Tea House", "9": "Guild Hall", "10": "Fruit Warehouse",
  "11": "Small Market", "12": "Catacombs", "13": "Abundance", "14": "Black Market",
  A: "Sultan's Palace A", B: "Sultan's Palace B", C: "Sultan's Palace C", D: "Sultan's Palace D",
};
// The names on the sheet's map, with soft hyphens where a phone's narrow cells break them.
const SH = "\u00ad";
const SHORT: Record<string, string> = {
  "1": `Fabric Ware${SH}house`, "5": `Spice Ware${SH}house`, "10": `Fruit Ware${SH}house`, "6": `Caravan${SH}serai`,
  "7": `Coffee Roast${SH}er`, "13": `Abun${SH}dance`, "12": `Cata${SH}combs`, "2": `Gem Mer${SH}chant`,
  A: "Palace A", B: "Palace B", C: "Palace C", D: "Palace D",
};
const GRID = [
  ["1", "2", "3", "3", "4", "5"],
  ["6", "7", "A", "B", "8", "9"],
  ["6", "7", "C", "D", "8", "9"],
  ["10", "11", "12", "12", "13", "14"],
];
const UPGRADABLE = ["1", "5", "8", "10", "14"];
const UPGRADES_PER_LOCATION = 2;
const WAREHOUSE: Record<string, string> = { "1": "fabric", "5": "spice", "10": "fruit" };
const WAREHOUSE_YIELD = [2, 3, 4];
const BLACK_MARKET_YIELD = [1, 2, 3];
const TEA_HOUSE_YIELD = [4, 6, 8];
const LIRA_SECTIONS = [20, 20];
const GOODS_ROW = 8;
const GOODS_BONUS_DEPTHS = [5, 6, 7, 8];
const AMULET = 10;
const RINGS = 3;
const SIDE_SMALL = "1-3";

function icons(side: string, loc: string): number {
  const small = side === SIDE_SMALL;
  if (LETTERS.includes(loc)) return 2;
  if (loc === "12") return small ? 3 : 2;
  return small ? 4 : 3;
}

/** What a place does, for this sheet's upgrades (the Caravanserai: the face-up caravan card). */
function placeEffect(loc: string, upgrades: Record<string, number>): string {
  const level = upgrades[loc] ?? 0;
  if (loc in WAREHOUSE) return `+${WAREHOUSE_YIELD[level]} ${WAREHOUSE[loc]}`;
  if (loc === "14") return `+${BLACK_MARKET_YIELD[level]} goods of your choice`;
  if (loc === "8") return `+${TEA_HOUSE_YIELD[level]} lira`;
  if (LETTERS.includes(loc)) return "pay the goods: 1 ruby";
  return PLACE_EFFECTS[loc] ?? "";
}
const PLACE_EFFECTS: Record<string, string> = {
  "2": "pay 10 lira: 1 ruby", "3": "pay 2 goods of a kind: 3 lira, fill 1 box", "4": "1 goods card, 1 lira",
  "6": "the caravan card", "7": "2 goods of your choice", "9": "1 guild card",
  "11": "discard a goods card: 5 lira", "12": "another place's action", "13": "up to 2 upgrades",
};
const GUILD: Record<number, { cost: number; text: string }> = {
  1: { cost: 3, text: "2 goods of your choice, 1 upgrade" },
  2: { cost: 2, text: "fill 2 boxes" },
  3: { cost: 3, text: "4 different goods, 1 lira" },
  4: { cost: 4, text: "4 goods of your choice" },
  5: { cost: 4, text: "ruby at palace A, 5 lira" },
  6: { cost: 3, text: "ruby at palace B, 1 guild card" },
  7: { cost: 3, text: "ruby at palace C, 1 good of your choice, fill 1 box" },
  8: { cost: 4, text: "ruby at palace D, 1 goods card, 1 upgrade" },
  9: { cost: 4, text: "2 goods cards, 1 good of your choice, fill 1 box" },
  10: { cost: 5, text: "pay 3 goods of your choice: 1 ruby" },
  11: { cost: 5, text: "discard a goods card and pay 1 good: 1 ruby" },
  12: { cost: 4, text: "ruby at any palace letter, 1 goods card, 1 guild card" },
  13: { cost: 6, text: "discard a goods card: 1 ruby, fill 1 box" },
  14: { cost: 7, text: "1 ruby" },
  15: { cost: 8, text: "1 ruby, 1 good of your choice" },
  16: { cost: 10, text: "1 ruby, 1 goods card, 1 guild card" },
};
const CARAVAN: Record<number, string> = {
  1: "3 goods of one kind", 2: "3 different goods", 3: "2 lira, 1 goods card", 4: "draw 2 guild cards, keep 1",
  5: "4 lira", 6: "ruby at palace A or B, 1 goods card", 7: "ruby at palace C or D, 1 good of your choice",
  8: "1 goods card or 1 good, 1 upgrade or fill 1 box, 1 lira",
};
const CHALLENGES: Record<number, string> = {
  1: "at most 3 upgrades crossed", 2: "35 lira", 3: "35 lira + 1 goods row completed",
  4: "35 lira + 2 ruby bonuses of the goods columns", 5: "35 lira + no guild card played",
  6: "2 goods rows completed", 7: "3 ruby bonuses of the goods columns",
  8: "3 ruby bonuses of the goods columns + 1 goods row completed", 9: "an action crossed at every place",
  10: "an action crossed at every place + 1 goods row completed",
  11: "4 guild cards played + 1 ruby bonus of the goods columns", 12: "no goods card played",
  13: "8 rubies from the Sultan's palace", 14: "5 rubies from one palace letter + 20 lira",
};
const PHASES: Record<string, string> = {
  setup: "setting up", turn: "a card to play", act: "every seat answers the card played", solo:
    "the left card is discarded: use it as an opponent would", draw: "a location card to draw",
  fountain: "a fountain: choose its reward", keep: "a guild card to keep of two", after: "end of the action",
  over: "the game is over",
};
const REASONS: Record<string, string> = {
  rubies: "a seat reached 10 rubies", display: "the display could not be refilled", deck: "the deck ran out",
};

function locationOf(card: number): string | null {
  return card < 2 * LOCATIONS.length ? LOCATIONS[card % LOCATIONS.length] : null;
}
function fountainOf(card: number): string | null {
  return card >= 2 * LOCATIONS.length ? FOUNTAINS[card - 2 * LOCATIONS.length] ?? null : null;
}
function cardName(card: number): string {
  const loc = locationOf(card);
  return loc ? NAMES[loc] : `Fountain (${fountainText(fountainOf(card) ?? "")})`;
}
function fountainText(reward: string): string {
  return { lira: "1 lira", good: "1 good of your choice", goods_card: "1 goods card", upgrade: "1 upgrade" }[reward]
    ?? reward;
}
function faceText(face: string): string {
  return face.split("/").join(" + ");
}

// --- DOM helpers ---------------------------------------------------------------------------------------------

type Child = Node | string | null | undefined | false;

function el(tag: string, attrs: Record<string, string | number | boolean | undefined> = {}, ...children: Child[]):
  HTMLElement {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** A box of the sheet: empty, filled (written in) or crossed (filled, then spent). */
function box(state: "empty" | "filled" | "crossed", extra = ""): HTMLElement {
  return el("span", { class: `ist-box ist-${state} ${extra}`.trim(), "aria-hidden": "true" });
}

function goodChip(good: string, text?: string): HTMLElement {
  return el("span", { class: `ist-good ist-${good}` }, text ?? good);
}

// --- labels of commands in the game's words ------------------------------------------------------------------

const SPENDS_GOODS = new Set(["3"]);  // the Great Market: `goods` is the kind paid twice
const SPENDS_GUILD = new Set([10, 11]);  // guild cards paying goods of choice

function listGoods(goods: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const g of goods) counts.set(g, (counts.get(g) ?? 0) + 1);
  return [...counts].map(([g, n]) => `${n} ${g}`).join(", ");
}

/** The choices an `Act` carries, short ("pay 2 fabric, fill lira"); empty when there is nothing to choose. */
function actChoices(act: Act, view: View): string {
  const place = act.target ?? act.location ?? null;
  const parts: string[] = [];
  if (act.letter) parts.push(`ruby at ${act.letter}`);
  const goods = act.goods ?? [];
  if (goods.length) {
    const spent = place !== null ? SPENDS_GOODS.has(place) : SPENDS_GUILD.has(view.guild_played ?? -1);
    parts.push(spent ? `pay ${place === "3" ? listGoods([...goods, ...goods]) : listGoods(goods)}`
      : `take ${listGoods(goods)}`);
  }
  else if (place === "6" && view.caravan === 8) parts.push("take 1 goods card");  // caravan 8: a card or a good
  if (act.discard) parts.push(`discard the ${faceText(act.discard)} card`);
  const cards = act.cards ?? [];
  if (cards.length) parts.push(`pay with the ${cards.map(faceText).join(" and ")} card${cards.length > 1 ? "s" : ""}`);
  else if (paysRuby(act, view)) parts.push("pay with goods from your sheet");
  const fill = act.fill ?? [];
  if (fill.length) parts.push(`fill ${fill.map((f) => (f === "bonus" ? "a bonus action" : f)).join(", ")}`);
  const upgrades = act.upgrades ?? [];
  if (upgrades.length) parts.push(`upgrade ${upgrades.map((u) => NAMES[u]).join(", ")}`);
  return parts.join("; ");
}

/** Whether an `Act` buys a ruby at the Sultan's palace (a letter's place, a caravan card or a guild card). */
function paysRuby(act: Act, view: View): boolean {
  const place = act.target ?? act.location ?? null;
  if (place === null) return PALACE_GUILDS.has(view.guild_played ?? -1);
  return LETTERS.includes(place) || Boolean(act.letter);
}
const PALACE_GUILDS = new Set([5, 6, 7, 8, 12]);

function viaText(via: string | undefined): string {
  return via === "icon" ? "cross an action icon" : via === "bonus" ? "cross a bonus action" : "free";
}

/** The whole sentence for a command (a button's aria-label and title). */
function commandText(cmd: Command, view: View): string {
  switch (cmd.type) {
    case "istanbul.PlayLocation": {
      const name = cmd.source === "hand" ? "your hand's card" : `the ${cmd.source} card`;
      return `Play ${name}`;
    }
    case "istanbul.PlayGuild":
      return `Pay ${GUILD[cmd.card]?.cost ?? "?"} lira and play guild card ${cmd.card} (${GUILD[cmd.card]?.text ?? ""})`;
    case "istanbul.Act": {
      const choices = actChoices(cmd, view);
      const what = cmd.location == null
        ? `Use guild card ${view.guild_played}`
        : cmd.target ? `Use the Catacombs as ${NAMES[cmd.target]}` : `Use ${NAMES[cmd.location]}`;
      const via = cmd.location == null ? "" : ` (${viaText(cmd.via)})`;
      return `${what}${via}${choices ? `: ${choices}` : ""}`;
    }
    case "istanbul.TakeBonus":
      return "Do not use the card: take a bonus action instead";
    case "istanbul.KeepGuild":
      return `Keep guild card ${cmd.card} (${GUILD[cmd.card]?.text ?? ""})`;
    case "istanbul.Draw":
      return cmd.source === "deck" ? "Draw the location deck's top card" : `Take the ${cmd.source} face-up card`;
    case "istanbul.ChooseFountain":
      return cmd.good ? `Fountain: take 1 ${cmd.good}` : `Fountain: upgrade ${NAMES[cmd.upgrade ?? ""] ?? "nothing"}`;
    default:
      return JSON.stringify(cmd);
  }
}

/** A legal command's button: short text on the board, the whole sentence for screen readers and as a tooltip. */
function commandButton(props: BoardProps, index: number, text: string, extra = ""): HTMLElement {
  const view = props.table.view as View;
  const cmd = props.table.legal[index] as Command;
  const sentence = commandText(cmd, view);
  const button = el("button", {
    type: "button", class: `ist-cmd ${extra}`.trim(), "data-legal": index, "aria-label": sentence, title: sentence,
  }, text);
  button.addEventListener("click", () => props.play(index));
  return button;
}

// --- the sheet -------------------------------------------------------------------------------------------

interface Marks {
  /** Place id -> how many answers it offers (this seat's sheet, while answering). */
  offers: Map<string, number>;
  played: string | null;
  reachable: Set<string>;
}

function adjacency(): Map<string, Set<string>> {
  const near = new Map<string, Set<string>>(LOCATIONS.map((loc) => [loc, new Set<string>()]));
  for (let r = 0; r < GRID.length; r++) {
    for (let c = 0; c < GRID[r].length; c++) {
      const a = GRID[r][c];
      for (const [dr, dc] of [[0, 1], [1, 0]]) {
        const b = GRID[r + dr]?.[c + dc];
        if (b && a !== b && a !== "12" && b !== "12") {
          near.get(a)!.add(b);
          near.get(b)!.add(a);
        }
      }
    }
  }
  return near;
}
const ADJACENT = adjacency();

function drawMap(sheet: Sheet, side: string, marks: Marks): HTMLElement {
  const map = el("div", { class: "ist-map", role: "group", "aria-label": "the bazaar's places" });
  const seen = new Set<string>();
  for (let r = 0; r < GRID.length; r++) {
    for (let c = 0; c < GRID[r].length; c++) {
      const loc = GRID[r][c];
      if (seen.has(loc)) continue;
      seen.add(loc);
      let rows = 1, cols = 1;
      while (GRID[r][c + cols] === loc) cols++;
      while (GRID[r + rows]?.[c] === loc) rows++;
      const total = icons(side, loc);
      const crossed = sheet.icons_crossed[loc] ?? 0;
      const upgrades = sheet.upgrades[loc] ?? 0;
      const classes = ["ist-place", LETTERS.includes(loc) ? "ist-palace-place" : ""];
      if (marks.played === loc) classes.push("ist-played");
      else if (marks.reachable.has(loc)) classes.push("ist-reachable");
      const offers = marks.offers.get(loc);
      const cell = el("div", {
        class: classes.join(" ").trim(), "data-place": loc,
        style: `grid-row: ${r + 1} / span ${rows}; grid-column: ${c + 1} / span ${cols}`,
        title: `${NAMES[loc]}: ${placeEffect(loc, sheet.upgrades)}. Actions crossed: ${crossed} of ${total}`
          + (UPGRADABLE.includes(loc) ? `; upgrades: ${upgrades} of ${UPGRADES_PER_LOCATION}` : ""),
      },
        el("span", { class: "ist-place-id" }, loc),
        el("span", { class: "ist-place-name" }, SHORT[loc] ?? NAMES[loc]),
        el("span", { class: "ist-place-effect" }, placeEffect(loc, sheet.upgrades)),
      );
      const iconRow = el("span", { class: "ist-icons", "aria-label": `${total - crossed} of ${total} actions left` });
      for (let i = 0; i < total; i++) iconRow.append(el("span", { class: `ist-icon${i < crossed ? " ist-x" : ""}` }));
      cell.append(iconRow);
      if (UPGRADABLE.includes(loc)) {
        const ups = el("span", { class: "ist-upgrades", "aria-label": `${upgrades} of ${UPGRADES_PER_LOCATION} upgrades` });
        for (let i = 0; i < UPGRADES_PER_LOCATION; i++) ups.append(box(i < upgrades ? "crossed" : "empty", "ist-upgrade"));
        cell.append(ups);
      }
      // The hash is the shell's route: a plain mark, not a link, names how many answers this place offers.
      if (offers) cell.append(el("span", { class: "ist-offers" }, `${offers} way${offers > 1 ? "s" : ""}`));
      map.append(cell);
    }
  }
  return map;
}

function drawTrack(filled: number, crossedCount: number, boxes: number, offset = 0): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (let i = offset; i < offset + boxes; i++) {
    out.push(box(i < crossedCount ? "crossed" : i < filled ? "filled" : "empty"));
  }
  return out;
}

function drawSheet(props: BoardProps, sheet: Sheet, view: View, marks: Marks, own: boolean,
  tools: { bonus?: HTMLElement | null } = {}): HTMLElement {
  const name = props.names[sheet.seat] ?? `Seat ${sheet.seat + 1}`;
  const awaited = view.awaiting.includes(sheet.seat);
  const sec = el("section", {
    class: `ist-sheet${own ? " ist-own" : ""}${awaited ? " ist-awaited" : ""}`, "data-seat": sheet.seat,
    "aria-label": `${name}'s sheet`,
  });
  const lira = sheet.lira_filled - sheet.lira_crossed;
  const header = el("header", { class: "ist-sheet-head" },
    el("strong", { class: "ist-name" }, name),
    sheet.first ? el("span", { class: "ist-first", title: "first player" }, "1st") : null,
    view.active === sheet.seat ? el("span", { class: "ist-active-tag" }, "active") : null,
    awaited ? el("span", { class: "ist-await-tag" }, "to decide") : null,
    view.phase === "act" && sheet.answered ? el("span", { class: "ist-answered-tag" }, "answered") : null,
    el("span", { class: "ist-counts" },
      el("span", { title: "rubies" }, `♦ ${sheet.rubies}`), " · ",
      el("span", { title: "lira available" }, `${lira} lira`), " · ",
      el("span", { title: "location cards in hand" }, `${sheet.hand} location`), " · ",
      el("span", { title: "guild cards in hand" }, `${sheet.guild_cards} guild`), " · ",
      el("span", { title: "goods cards in hand" }, `${sheet.goods_cards} goods card${sheet.goods_cards === 1 ? "" : "s"}`)),
  );
  sec.append(header, drawMap(sheet, view.side, marks));

  // Rubies: the amulet's 10 boxes, then the 3 rings.
  const rubies = el("div", { class: "ist-row ist-rubies", "aria-label": `${sheet.rubies} rubies` },
    el("span", { class: "ist-row-label" }, "Rubies"));
  for (let i = 0; i < AMULET + RINGS; i++) {
    rubies.append(el("span", { class: `ist-ruby${i < sheet.rubies ? " ist-has" : ""}${i >= AMULET ? " ist-ring" : ""}`,
      "aria-hidden": "true" }));
  }
  if (sheet.rubies > AMULET + RINGS) rubies.append(el("span", { class: "ist-more" }, `+${sheet.rubies - AMULET - RINGS}`));

  // Lira: two sections of 20, a ruby bonus at the end of each.
  const liraRow = el("div", { class: "ist-row ist-lira", "aria-label": `lira: ${sheet.lira_filled} written, ${sheet.lira_crossed} spent` },
    el("span", { class: "ist-row-label" }, "Lira"));
  let offset = 0;
  LIRA_SECTIONS.forEach((size, k) => {
    const section = el("span", { class: "ist-lira-section" }, ...drawTrack(sheet.lira_filled, sheet.lira_crossed, size, offset));
    const bonus = `lira-${k + 1}`;
    section.append(el("span", { class: `ist-ruby-bonus${sheet.ruby_bonuses.includes(bonus) ? " ist-has" : ""}`,
      title: `ruby bonus: section ${k + 1} completed` }, "♦"));
    liraRow.append(section);
    offset += size;
  });

  // Goods: four rows of 8; the columns 5-8 each give a ruby when every row reaches them.
  const goods = el("div", { class: "ist-goods", role: "table", "aria-label": "goods" });
  GOODS.forEach((good, k) => {
    const filled = sheet.goods_filled[k] ?? 0;
    const crossed = sheet.goods_crossed[k] ?? 0;
    const row = el("div", { class: "ist-row", role: "row", "aria-label": `${good}: ${filled - crossed} available (${filled} written, ${crossed} spent)` },
      goodChip(good, `${good} ${filled - crossed}`));
    for (let i = 0; i < GOODS_ROW; i++) {
      row.append(box(i < crossed ? "crossed" : i < filled ? "filled" : "empty",
        `ist-${good}-box${GOODS_BONUS_DEPTHS.includes(i + 1) ? " ist-depth" : ""}`));
    }
    goods.append(row);
  });
  const bonusRow = el("div", { class: "ist-row ist-goods-bonus" }, el("span", { class: "ist-row-label" }, ""));
  for (let i = 0; i < GOODS_ROW; i++) {
    const depth = i + 1;
    bonusRow.append(GOODS_BONUS_DEPTHS.includes(depth)
      ? el("span", { class: `ist-ruby-bonus${sheet.ruby_bonuses.includes(`goods-${depth}`) ? " ist-has" : ""}`,
        title: `ruby bonus: column ${depth} in every goods row` }, "♦")
      : el("span", { class: "ist-box-gap" }));
  }
  goods.append(bonusRow);

  // Bonus actions.
  const bonusActions = el("div", { class: "ist-row ist-bonus", "aria-label": `bonus actions: ${sheet.bonus_filled - sheet.bonus_crossed} available` },
    el("span", { class: "ist-row-label" }, "Bonus"), ...drawTrack(sheet.bonus_filled, sheet.bonus_crossed, sheet.bonus_boxes));
  if (tools.bonus) bonusActions.append(tools.bonus);

  sec.append(rubies, liraRow, goods, bonusActions);
  return sec;
}

// --- the table between the sheets ----------------------------------------------------------------------------

function findLegal(props: BoardProps, match: (cmd: Command) => boolean): number[] {
  const out: number[] = [];
  (props.table.legal as Command[]).forEach((cmd, i) => { if (match(cmd)) out.push(i); });
  return out;
}

function locationCard(card: number | null, label: string, ...extra: Child[]): HTMLElement {
  if (card === null) return el("div", { class: "ist-card ist-empty-card" }, label, el("span", { class: "ist-card-name" }, "—"));
  const loc = locationOf(card);
  return el("div", { class: `ist-card ist-location-card${loc ? "" : " ist-fountain-card"}`, "data-card": card },
    el("span", { class: "ist-card-label" }, label),
    loc ? el("span", { class: "ist-card-id" }, loc) : el("span", { class: "ist-card-id" }, "⛲"),
    el("span", { class: "ist-card-name" }, cardName(card)), ...extra);
}

function drawTable(props: BoardProps, view: View, used: Set<number>): HTMLElement {
  const section = el("section", { class: "ist-table", "aria-label": "the table" });
  const names = props.names;
  const who = (seat: number | null) => (seat === null ? "—" : names[seat] ?? `Seat ${seat + 1}`);
  const over = view.phase === "over";
  const reason = (props.table.result?.details as { reason?: string } | undefined)?.reason;
  const status = el("p", { class: "ist-status" },
    `Round ${view.round}`, view.active !== null && !over ? ` · ${who(view.active)}'s turn` : "",
    ` · ${PHASES[view.phase] ?? view.phase}`, over && reason ? `: ${REASONS[reason] ?? reason}` : "",
    view.awaiting.length ? ` · awaiting ${view.awaiting.map(who).join(", ")}` : "");
  section.append(status);

  // Display: the two face-up location cards, and the deck.
  const display = el("div", { class: "ist-display", role: "group", "aria-label": "face-up location cards" });
  ["left", "right"].forEach((slot, k) => {
    const card = view.display[k] ?? null;
    const buttons: HTMLElement[] = [];
    for (const i of findLegal(props, (c) => (c.type === "istanbul.PlayLocation" || c.type === "istanbul.Draw") && c.source === slot)) {
      used.add(i);
      buttons.push(commandButton(props, i, (props.table.legal[i] as Command).type === "istanbul.Draw" ? "Take" : "Play"));
    }
    display.append(locationCard(card, slot, ...buttons));
  });
  const deckButtons: HTMLElement[] = [];
  for (const i of findLegal(props, (c) => c.type === "istanbul.Draw" && c.source === "deck")) {
    used.add(i);
    deckButtons.push(commandButton(props, i, "Draw"));
  }
  display.append(el("div", { class: "ist-card ist-deck" }, el("span", { class: "ist-card-label" }, "location deck"),
    el("span", { class: "ist-card-name" }, `${view.location_deck} cards`),
    el("span", { class: "ist-small" }, `discarded: ${view.location_discard.length}`), ...deckButtons));
  const played = view.played !== null && view.played !== undefined
    ? locationCard(view.played, view.phase === "solo" ? "discarded (solo)" : "played this turn")
    : view.guild_played !== null && view.guild_played !== undefined
      ? el("div", { class: "ist-card ist-guild-card ist-played-card" }, el("span", { class: "ist-card-label" }, "guild card played"),
        el("span", { class: "ist-card-id" }, `${view.guild_played}`), el("span", { class: "ist-card-name" }, GUILD[view.guild_played]?.text ?? ""))
      : null;
  if (played) display.append(played);
  section.append(display);

  // The caravan card and the Sultan's palace.
  const palace = el("div", { class: "ist-palace", role: "group", "aria-label": "the Sultan's palace" });
  for (const p of view.palace) {
    palace.append(el("div", { class: "ist-letter", "data-letter": p.letter, title: `${p.cards.length} ruby card(s)` },
      el("span", { class: "ist-letter-id" }, p.letter),
      el("span", { class: "ist-price" }, ...(p.price.length ? p.price.map((g) => goodChip(g, "")) : ["no ruby left"])),
      el("span", { class: "ist-small" }, `${p.cards.length} card${p.cards.length === 1 ? "" : "s"}`)));
  }
  const caravan = el("div", { class: "ist-card ist-caravan" }, el("span", { class: "ist-card-label" }, "caravan card"),
    el("span", { class: "ist-card-id" }, view.caravan !== null ? `${view.caravan}` : "—"),
    el("span", { class: "ist-card-name" }, view.caravan !== null ? CARAVAN[view.caravan] ?? "" : "none"));
  const decks = el("div", { class: "ist-decks ist-small" },
    `guild deck ${view.guild_deck} (discard ${view.guild_discard.length}) · goods deck ${view.goods_deck} `
    + `(discard ${view.goods_discard.length}) · ruby cards ${view.ruby_deck}`);
  section.append(el("div", { class: "ist-market" }, caravan, palace), decks);

  // A fountain waiting for choices.
  if (view.fountain) {
    const buttons: HTMLElement[] = [];
    for (const i of findLegal(props, (c) => c.type === "istanbul.ChooseFountain")) {
      used.add(i);
      const cmd = props.table.legal[i] as istanbul.ChooseFountain;
      buttons.push(commandButton(props, i, cmd.good ? `1 ${cmd.good}` : `upgrade ${NAMES[cmd.upgrade ?? ""] ?? "—"}`,
        cmd.good ? `ist-good ist-${cmd.good}` : ""));
    }
    section.append(el("div", { class: "ist-fountain", role: "group", "aria-label": "fountain" },
      el("strong", {}, `Fountain: ${fountainText(view.fountain)}`), ...buttons));
  }
  return section;
}

// --- this seat's hand (secret) ---------------------------------------------------------------------------

function drawHand(props: BoardProps, view: View, used: Set<number>): HTMLElement | null {
  const you = view.you;
  if (!you) return null;
  const hand = el("section", { class: "ist-hand", "data-secret": "", "aria-label": "your hand" });
  const cards = el("div", { class: "ist-hand-cards" });
  you.hand.forEach((card, k) => {
    const buttons: HTMLElement[] = [];
    for (const i of findLegal(props, (c) => k === 0 && c.type === "istanbul.PlayLocation" && c.source === "hand")) {
      used.add(i);
      buttons.push(commandButton(props, i, "Play"));
    }
    cards.append(locationCard(card, "your location card", ...buttons));
  });
  const guildSeen = new Set<number>();
  you.guild_cards.forEach((card) => {
    const buttons: HTMLElement[] = [];
    if (!guildSeen.has(card)) {
      for (const i of findLegal(props, (c) => c.type === "istanbul.PlayGuild" && c.card === card)) {
        used.add(i);
        buttons.push(commandButton(props, i, `Pay ${GUILD[card]?.cost ?? "?"} lira, play`));
      }
    }
    guildSeen.add(card);
    cards.append(el("div", { class: "ist-card ist-guild-card", "data-guild": card },
      el("span", { class: "ist-card-label" }, `guild card · ${GUILD[card]?.cost ?? "?"} lira`),
      el("span", { class: "ist-card-id" }, `${card}`), el("span", { class: "ist-card-name" }, GUILD[card]?.text ?? ""), ...buttons));
  });
  you.keep.forEach((card) => {
    const buttons: HTMLElement[] = [];
    for (const i of findLegal(props, (c) => c.type === "istanbul.KeepGuild" && c.card === card)) {
      used.add(i);
      buttons.push(commandButton(props, i, "Keep"));
    }
    cards.append(el("div", { class: "ist-card ist-guild-card ist-keep", "data-guild": card },
      el("span", { class: "ist-card-label" }, "keep one of two"), el("span", { class: "ist-card-id" }, `${card}`),
      el("span", { class: "ist-card-name" }, GUILD[card]?.text ?? ""), ...buttons));
  });
  you.goods_cards.forEach((face) => {
    cards.append(el("div", { class: "ist-card ist-goods-card", "data-goods-card": face },
      el("span", { class: "ist-card-label" }, "goods card"),
      el("span", { class: "ist-price" }, ...face.split("/").map((g) => goodChip(g)))));
  });
  if (!cards.childNodes.length) cards.append(el("p", { class: "ist-small" }, "No cards in hand."));
  hand.append(el("h3", {}, "Your hand"), cards);
  if (you.answer) {
    const answer = you.answer;
    hand.append(el("p", { class: "ist-your-answer" }, "Your answer (secret until everyone answered): ",
      commandText({ type: "istanbul.Act", ...answer } as Act, view)));
  } else if (you.took_bonus) {
    hand.append(el("p", { class: "ist-your-answer" }, "Your answer (secret until everyone answered): a bonus action"));
  }
  return hand;
}

// --- the answers to the played card, on this seat's sheet ----------------------------------------------------

function drawAnswers(props: BoardProps, view: View, used: Set<number>, marks: Marks): HTMLElement | null {
  const acts = findLegal(props, (c) => c.type === "istanbul.Act");
  if (!acts.length) return null;
  const groups = new Map<string, number[]>();
  for (const i of acts) {
    const act = props.table.legal[i] as Act;
    const key = `${act.location ?? "guild"}|${act.via ?? "free"}|${act.target ?? ""}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(i);
    if (act.location) marks.offers.set(act.location, (marks.offers.get(act.location) ?? 0) + 1);
  }
  const played = view.played !== null && view.played !== undefined ? locationOf(view.played) : null;
  const title = view.guild_played != null ? `Use guild card ${view.guild_played}`
    : view.phase === "solo" ? `Use the discarded ${played ? NAMES[played] : "card"} as an opponent would`
      : `Answer ${played ? NAMES[played] : "the card"}: use it or a place next to it`;
  const panel = el("section", { class: "ist-answers", role: "group", "aria-label": title }, el("h3", {}, title));
  const listed: ChoiceGroup[] = [];
  for (const [key, indexes] of groups) {
    const [loc, via, target] = key.split("|");
    const place = loc === "guild" ? null : loc;
    const heading = place === null ? `Guild card ${view.guild_played}: ${GUILD[view.guild_played ?? 0]?.text ?? ""}`
      : `${NAMES[place]}${target ? ` → ${NAMES[target]}` : ""} (${viaText(via)})`;
    const buttons = indexes.map((i) => {
      used.add(i);
      const choices = actChoices(props.table.legal[i] as Act, view);
      const b = commandButton(props, i, choices || "Use");
      b.setAttribute("data-facet-way", viaText(via));
      return b;
    });
    listed.push({ key, heading, buttons });
  }
  // Long lists (a market's goods and cards to pay with, each way to reach it: up to ~175 answers) get an index of
  // the places, a search and a filter by the way a place is reached (boards/choices.ts); every answer still shows.
  const ways = [...new Set(listed.map((g) => viaText(g.key.split("|")[1])))];
  panel.append(choiceList(listed, {
    key: "ist-answers", label: title, decision: JSON.stringify(acts.map((i) => props.table.legal[i])),
    facets: ways.length > 1 ? [{ name: "way", label: "reached", values: ways }] : [],
    groupClass: "ist-answer-group", headClass: "ist-answer-head",
    groupAttrs: (g) => {
      const [loc, via] = g.key.split("|");
      return { "data-place": loc === "guild" ? "guild" : loc, ...(via === "free" ? {} : { "data-via": via }) };
    },
  }));
  return panel;
}

// --- the end -------------------------------------------------------------------------------------------------

function drawResult(props: BoardProps, view: View): HTMLElement | null {
  if (!view.scores) return null;
  const winners = view.winners ?? [];
  const rows = view.scores.map((s, seat) => el("tr", { class: winners.includes(seat) ? "ist-winner" : "" },
    el("th", { scope: "row" }, props.names[seat] ?? `Seat ${seat + 1}`), el("td", {}, `${s.rubies}`),
    el("td", {}, `${s.tiebreak}`), el("td", {}, winners.includes(seat) ? "wins" : "")));
  const out = el("section", { class: "ist-final", "aria-label": "final scores" },
    el("h3", {}, "Final scores"),
    el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "Seat"), el("th", {}, "Rubies"), el("th", {}, "Tie-break"), el("th", {}, ""))),
      el("tbody", {}, ...rows)));
  if (view.players.length === 1) {
    const met = new Set(view.challenges);
    out.append(el("p", {}, view.column ? `Solo: ${view.column} rubies column` : "Solo: fewer than 10 rubies: no column"),
      el("ol", { class: "ist-challenges" }, ...Object.entries(CHALLENGES).map(([n, text]) =>
        el("li", { class: met.has(Number(n)) ? "ist-met" : "", value: n }, `${text}${met.has(Number(n)) ? " ✓" : ""}`))));
  }
  return out;
}

// --- the board -------------------------------------------------------------------------------------------

function render(root: HTMLElement, props: BoardProps): void {
  const view = props.table.view as View | null;
  const board = el("div", { class: "ist-board" });
  root.append(board);
  if (!view || !Array.isArray(view.players)) {
    board.append(el("p", {}, "The game is being set up."));
    return;
  }
  const used = new Set<number>();
  const you = view.you?.seat ?? props.table.seat ?? null;
  const playedLoc = view.played != null ? locationOf(view.played) : null;
  const marks: Marks = {
    offers: new Map(), played: playedLoc,
    reachable: playedLoc ? ADJACENT.get(playedLoc) ?? new Set() : new Set(),
  };
  const result = drawResult(props, view);
  if (result) board.append(result);
  board.append(drawTable(props, view, used));
  if (view.players.length === 1 && !view.scores) {
    // Solo: the challenge table beside the sheet (which ones are met is known at the end).
    board.append(el("details", { class: "ist-solo" }, el("summary", {}, "Solo challenges (scored at the end)"),
      el("ol", { class: "ist-challenges" }, ...Object.values(CHALLENGES).map((text) => el("li", {}, text)))));
  }
  const hand = drawHand(props, view, used);
  const answers = drawAnswers(props, view, used, marks);
  let bonusTool: HTMLElement | null = null;
  for (const i of findLegal(props, (c) => c.type === "istanbul.TakeBonus")) {
    used.add(i);
    bonusTool = commandButton(props, i, "Take a bonus action instead", "ist-take-bonus");
  }
  const own = you !== null ? view.players.find((p) => p.seat === you) : undefined;
  if (own) {
    const ownSheet = drawSheet(props, own, view, marks, true, { bonus: bonusTool });
    // Pointing at (or tabbing into) a place's answers lights the place up on the sheet.
    for (const group of answers?.querySelectorAll<HTMLElement>(".ist-answer-group") ?? []) {
      const cell = ownSheet.querySelector<HTMLElement>(`.ist-place[data-place="${group.dataset.place}"]`);
      if (!cell) continue;
      const on = () => cell.classList.add("ist-lit");
      const off = () => cell.classList.remove("ist-lit");
      group.addEventListener("mouseenter", on);
      group.addEventListener("mouseleave", off);
      group.addEventListener("focusin", on);
      group.addEventListener("focusout", off);
    }
    const mine = el("div", { class: "ist-mine" }, ownSheet);
    const side = el("div", { class: "ist-side" });
    if (answers) side.append(answers);
    if (hand) side.append(hand);
    mine.append(side);
    board.append(mine);
  } else {
    if (answers) board.append(answers);
    if (hand) board.append(hand);
    if (bonusTool) board.append(bonusTool);
  }
  const others = view.players.filter((p) => p.seat !== you);
  if (others.length) {
    const empty: Marks = { offers: new Map(), played: playedLoc, reachable: marks.reachable };
    board.append(el("div", { class: "ist-others", "aria-label": you === null ? "the sheets" : "the other seats' sheets" },
      ...others.map((p) => drawSheet(props, p, view, empty, false))));
  }
  // Any legal command not placed above (a kind this board does not know) still gets its button.
  const rest = (props.table.legal as Command[]).map((_, i) => i).filter((i) => !used.has(i));
  if (rest.length) {
    board.append(el("div", { class: "ist-more-commands", role: "group", "aria-label": "other commands" },
      ...rest.map((i) => commandButton(props, i, commandText(props.table.legal[i] as Command, view)))));
  }
}

export const board: Board = { title: "Istanbul: Choose & Write", render };
