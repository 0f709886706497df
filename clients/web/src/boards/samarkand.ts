// Le marché de Samarkand's board: the market (each seller's stall with the card it put up, the bank's stall with
// 3 players, the camel stall), the countdown the dean calls from 10 down to 1 (in a real-time table the value
// ticks on its own, with the time left on the value shown as a draining bar), this seat's hand and what lies
// behind its screen (secrets, inside `data-secret`), the other seats as the table sees them (cards in hand,
// the card face down, goods bought, the screen), the discard pile and, at the end, the scoring line by line.
//
// Where the physical game puts each decision: a card of the hand is put up for sale by clicking it; "Stop!" is
// called on the stall one wants to buy from; "Pass" lets the dean's count go on; at scoring a goods card is
// left behind on the goods themselves and the least-bought type is chosen on the type.
//
// Hooks for tests (beside the contract's `data-legal` and `data-secret`): `.smk[data-phase][data-value]`, hand
// stacks `[data-hand="kind:value"][data-count]`, the viewer's screen `[data-screen="seat"]` with
// `[data-money]`; another seat's screen shows no money nor camels until the scoring lifts the screens.
import type { TableView } from "souk-client";
import { serverClock } from "../client.js";
import { h, type Child } from "../dom.js";
import type { Board, BoardProps } from "./types.js";

type Target = number | "bank" | "camel";
interface Goods { kind: string; value: number }
interface Player {
  seat: number; sells: string; hand_count: number; has_chosen: boolean; has_answered: boolean;
  offer: number | null; goods: Goods[] | null; money: number | null; camels: number[] | null;
  discarded?: Goods[]; least_bought?: string | null;
}
interface You { seat: number; hand: number[]; chosen: number | null; answered: boolean; stop: boolean | null;
  target: Target | null }
interface SeatScore { money: number; wealth: number; least_bought_kind: string | null; least_bought: number;
  series: number; capacity: number; goods_kept: number; capacity_penalty: number; discarded: Goods[]; total: number }
interface View {
  seat: number | null; phase: string; round: number; dean: number; value: number | null; awaiting: number[];
  players: Player[]; bank_goods: string | null; bank_offer: number | null; bank_pile: number;
  camel_up: number | null; camel_pile: number; discard: Goods[]; you: You | null;
  scores?: number[] | null; winners?: number[] | null; details?: SeatScore[] | null;
}
type Command =
  | { type: "samarkand.ChooseCard"; value: number }
  | { type: "samarkand.Pass" }
  | { type: "samarkand.Stop"; target: Target }
  | { type: "samarkand.DiscardGoods"; kind: string; value: number }
  | { type: "samarkand.ChooseLeastBought"; kind: string };

const ROUNDS = 10;
const COUNT_FROM = 10;
/** The goods as the box names them (DATA.md: the publisher's five types), with the French rulebook's word. */
const GOODS: Record<string, { name: string; fr: string; mark: string }> = {
  carpets: { name: "Carpets", fr: "tapis", mark: "▦" },
  spices: { name: "Spices", fr: "épices", mark: "✺" },
  fruits: { name: "Fruits", fr: "fruits", mark: "●" },
  jewels: { name: "Jewels", fr: "bijoux", mark: "◆" },
  clothes: { name: "Silk clothes", fr: "vêtements de soie", mark: "≋" },
};
const PHASE_TEXT: Record<string, string> = {
  setup: "Setting up the market",
  choosing: "Each seller puts one card of his hand up for sale, face down",
  countdown: "The dean counts down: call “Stop!” on a card to buy it at the value called",
  between: "The round ends",
  scoring: "The screens are lifted: camels carry the goods, then the scoring",
  over: "The game is over",
};

function goodsName(kind: string | null | undefined): string {
  return kind ? GOODS[kind]?.name ?? kind : "goods";
}

function kindClass(kind: string | null | undefined): string {
  return `smk-kind smk-${kind && GOODS[kind] ? kind : "other"}`;
}

/** A goods card face up: its type's colour and mark, its value. */
function goodsCard(kind: string, value: number | null, attrs: Record<string, string | number> = {}): HTMLElement {
  return h("span", { class: `smk-card ${kindClass(kind)}`, ...attrs },
    h("span", { class: "smk-mark", "aria-hidden": "true" }, GOODS[kind]?.mark ?? "■"),
    h("span", { class: "smk-value" }, value === null ? "?" : String(value)),
    h("span", { class: "smk-sr" }, ` ${goodsName(kind)}`));
}

function cardBack(label: string): HTMLElement {
  return h("span", { class: "smk-card smk-back", role: "img", "aria-label": label });
}

function camelCard(capacity: number): HTMLElement {
  return h("span", { class: "smk-card smk-camel", role: "img", "aria-label": `a camel carrying ${capacity}` },
    camelMark(),
    h("span", { class: "smk-value" }, String(capacity)));
}

const SVG = "http://www.w3.org/2000/svg";

/** A camel's silhouette, drawn here (no font has to hold a camel, no image is fetched). */
function camelMark(): SVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 16");
  svg.setAttribute("class", "smk-mark smk-camel-mark");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M2 6 L4 4 L5 5 L5 8 Q7 8 8 6 Q10 2 12 6 Q14 2 16 6 Q18 8 18 10 L18 15 L17 15 L17 11"
    + " L15 11 L15 15 L14 15 L14 11 L9 11 L9 15 L8 15 L8 11 L7 11 L7 15 L6 15 L6 10 Q4 9 4 7 L2 7 Z");
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

function money(amount: number): string {
  return `${amount} dirham${amount === 1 ? "" : "s"}`;
}

function byValue(goods: readonly Goods[]): Goods[] {
  return [...goods].sort((a, b) => (a.kind === b.kind ? a.value - b.value : a.kind < b.kind ? -1 : 1));
}

function sameTarget(a: Target | null | undefined, b: Target): boolean {
  return a === b;
}

export const board: Board = {
  title: "Le marché de Samarkand",
  render(root: HTMLElement, props: BoardProps): void {
    const table = props.table as TableView;
    const view = table.view as unknown as View | null;
    if (!view || !Array.isArray(view.players)) {
      root.append(h("p", { class: "smk-empty" }, "The market is not set up yet."));
      return;
    }
    root.append(draw(view, table, props));
  },
};

function draw(view: View, table: TableView, props: BoardProps): HTMLElement {
  const legal = (table.legal ?? []) as unknown as Command[];
  const names = (seat: number) => props.names[seat] ?? `Seat ${seat}`;
  const me = view.you ? view.you.seat : null;
  const lifted = view.phase === "scoring" || view.phase === "over";
  const awaited = new Set(view.awaiting ?? []);
  const used = new Set<number>();

  /** The legal command at `index` as a button in the game's words. */
  const button = (index: number, label: string, cls: string, ...content: Child[]) => {
    used.add(index);
    return h("button", { type: "button", class: `smk-action ${cls}`, "data-legal": index, "aria-label": label,
      title: label, onclick: () => props.play(index) }, ...(content.length ? content : [label]));
  };
  const find = (test: (c: Command) => boolean) => legal.findIndex(test);
  const sellerName = (target: Target) =>
    target === "bank" ? "the bank" : target === "camel" ? "the camels" : names(target);

  // --- the countdown ---------------------------------------------------------------------------------------
  const passAt = find((c) => c.type === "samarkand.Pass");
  const countdown = h("section", { class: "smk-countdown", "aria-label": "The dean's countdown" },
    h("div", { class: "smk-count-head" },
      h("span", { class: "smk-round" }, `Round ${view.round || 1} of ${ROUNDS}`),
      h("span", { class: "smk-dean" }, "Dean: ", h("strong", {}, names(view.dean)), me === view.dean ? " (you)" : "")),
    h("ol", { class: "smk-pips", "aria-label": view.value === null ? "The countdown is not running"
      : `The dean calls ${view.value}` },
      Array.from({ length: COUNT_FROM }, (_, i) => COUNT_FROM - i).map((n) =>
        h("li", { class: `smk-pip${view.value === n ? " now" : view.value !== null && n > view.value ? " past" : ""}`,
          "aria-current": view.value === n ? "true" : null }, String(n)))),
    view.value !== null ? h("p", { class: "smk-called", role: "status" },
      h("span", { class: "smk-called-value" }, String(view.value)), " — “", String(view.value), "!” calls the dean")
      : h("p", { class: "smk-called idle" }, PHASE_TEXT[view.phase] ?? view.phase),
    realtimeBar(table, view),
    passAt >= 0 ? button(passAt, `Pass: let the dean count on below ${view.value}`, "smk-pass",
      "Pass", h("small", {}, ` — let the count go on`)) : null,
    myAnswer(view, sellerName));

  // --- the market ------------------------------------------------------------------------------------------
  const stopAt = (target: Target) => find((c) => c.type === "samarkand.Stop" && sameTarget(c.target, target));
  const stopButton = (target: Target, what: string) => {
    const index = stopAt(target);
    return index < 0 ? null
      : button(index, `Stop! Buy ${what} for ${view.value ?? "?"}`, "smk-stop", "Stop!",
        h("small", {}, ` buy for ${view.value ?? "?"}`));
  };
  const stalls: HTMLElement[] = view.players.map((p) => {
    const mine = p.seat === me;
    let card: Child;
    if (p.offer !== null) card = goodsCard(p.sells, p.offer, { "data-offer": `${p.sells}:${p.offer}` });
    else if (view.phase === "choosing" && mine && view.you?.chosen != null) {
      card = h("span", { "data-secret": "", class: "smk-chosen" }, goodsCard(p.sells, view.you.chosen),
        h("small", {}, "face down"));
    } else if (view.phase === "choosing" && p.has_chosen) card = cardBack(`${names(p.seat)} put a card face down`);
    else card = h("span", { class: "smk-card smk-none" }, view.phase === "choosing" ? "…" : "—");
    return h("li", { class: `smk-stall ${kindClass(p.sells)}${mine ? " mine" : ""}${awaited.has(p.seat) ? " awaited" : ""}`,
      "data-stall": p.seat },
      h("div", { class: "smk-stall-head" },
        h("span", { class: "smk-stall-kind" }, goodsName(p.sells)),
        h("span", { class: "smk-stall-seller" }, mine ? "your stall" : names(p.seat))),
      card,
      p.offer !== null ? stopButton(p.seat, `${names(p.seat)}'s ${goodsName(p.sells)} ${p.offer}`) : null);
  });
  if (view.bank_goods) {
    const kind = view.bank_goods;
    stalls.push(h("li", { class: `smk-stall smk-bank ${kindClass(kind)}`, "data-stall": "bank" },
      h("div", { class: "smk-stall-head" }, h("span", { class: "smk-stall-kind" }, goodsName(kind)),
        h("span", { class: "smk-stall-seller" }, "the bank")),
      view.bank_offer !== null ? goodsCard(kind, view.bank_offer, { "data-offer": `${kind}:${view.bank_offer}` })
        : h("span", { class: "smk-card smk-none" }, "—"),
      h("small", { class: "smk-pile" }, `${view.bank_pile} in the pile`),
      view.bank_offer !== null ? stopButton("bank", `the bank's ${goodsName(kind)} ${view.bank_offer}`) : null));
  }
  stalls.push(h("li", { class: "smk-stall smk-camels", "data-stall": "camel" },
    h("div", { class: "smk-stall-head" }, h("span", { class: "smk-stall-kind" }, "Camels"),
      h("span", { class: "smk-stall-seller" }, "the bank")),
    view.camel_up !== null ? camelCard(view.camel_up) : h("span", { class: "smk-card smk-none" }, "—"),
    h("small", { class: "smk-pile" }, `${view.camel_pile} in the pile`),
    view.camel_up !== null ? stopButton("camel", `the camel carrying ${view.camel_up}`) : null));
  const market = h("section", { class: "smk-market", "aria-labelledby": "smk-market-title" },
    h("h3", { id: "smk-market-title" }, "The market"), h("ul", { class: "smk-stalls" }, stalls));

  // --- this seat: the hand and the screen ------------------------------------------------------------------
  let mine: Child = null;
  if (view.you && me !== null) {
    const you = view.you;
    const self = view.players[me];
    const counts = new Map<number, number>();
    for (const v of you.hand) counts.set(v, (counts.get(v) ?? 0) + 1);
    const stacks = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([value, count]) => {
      const face = [goodsCard(self.sells, value), count > 1 ? h("span", { class: "smk-count" }, `×${count}`) : null];
      const index = find((c) => c.type === "samarkand.ChooseCard" && c.value === value);
      const attrs = { class: "smk-stack", "data-hand": `${self.sells}:${value}`, "data-count": count };
      return index >= 0
        ? h("span", attrs, button(index, `Put up a ${goodsName(self.sells)} card of ${value} for sale`, "smk-sell",
          ...face))
        : h("span", attrs, ...face);
    });
    mine = h("section", { class: "smk-mine", "aria-labelledby": "smk-mine-title" },
      h("h3", { id: "smk-mine-title" }, "Your hand and your screen"),
      h("div", { class: "smk-hand", "data-secret": "", "aria-label": "Your hand (secret)" },
        stacks.length ? stacks : h("span", { class: "note" }, "No cards left in your hand.")),
      screen(self, true));
  }

  // --- the screen of a seat: money, camels, goods (secret to its owner until the scoring) ------------------
  function screen(p: Player, own: boolean): HTMLElement {
    const secret = own && !lifted;
    const camels = p.camels;
    const capacity = camels ? camels.reduce((a, b) => a + b, 0) : null;
    const goods = p.goods === null ? null : byValue(p.goods);
    const discardAt = (g: Goods) =>
      own ? find((c) => c.type === "samarkand.DiscardGoods" && c.kind === g.kind && c.value === g.value) : -1;
    const shownDiscard = new Set<number>();
    const goodsRow = goods === null
      ? h("span", { class: "note" }, "goods behind the screen")
      : goods.length === 0 ? h("span", { class: "note" }, "no goods yet")
      : goods.map((g) => {
        const index = discardAt(g);
        const card = goodsCard(g.kind, g.value);
        if (index >= 0 && !shownDiscard.has(index)) {
          shownDiscard.add(index);
          return button(index, `Leave behind ${goodsName(g.kind)} ${g.value}`, "smk-discard-goods", card);
        }
        return card;
      });
    const leastKinds = legal.map((c, i) => [c, i] as const).filter(([c]) => own && c.type === "samarkand.ChooseLeastBought");
    const body = h("div", { class: "smk-screen-body" },
      h("div", { class: "smk-line" }, h("span", { class: "smk-label" }, "Money"),
        p.money === null ? h("span", { class: "note" }, "behind the screen")
          : h("span", { class: "smk-money", "data-money": p.money }, money(p.money))),
      h("div", { class: "smk-line" }, h("span", { class: "smk-label" }, "Camels"),
        camels === null ? h("span", { class: "note" }, "behind the screen")
          : camels.length === 0 ? h("span", { class: "note" }, "none")
          : [camels.map((c) => camelCard(c)), h("span", { class: "smk-carry" }, `carry ${capacity}`)]),
      h("div", { class: "smk-line smk-goods" }, h("span", { class: "smk-label" }, "Goods"), goodsRow),
      p.discarded && p.discarded.length ? h("div", { class: "smk-line" }, h("span", { class: "smk-label" }, "Left behind"),
        p.discarded.map((g) => goodsCard(g.kind, g.value))) : null,
      leastKinds.length ? h("div", { class: "smk-line smk-least" }, h("span", { class: "smk-label" }, "Least bought"),
        leastKinds.map(([c, i]) => {
          const kind = (c as { kind: string }).kind;
          return button(i, `Count ${goodsName(kind)} as your least-bought type`, `smk-choose-least ${kindClass(kind)}`,
            goodsName(kind));
        })) : p.least_bought ? h("div", { class: "smk-line" }, h("span", { class: "smk-label" }, "Least bought"),
        goodsName(p.least_bought)) : null);
    return h("div", { class: `smk-screen${secret ? " secret" : ""}`, "data-screen": p.seat,
      ...(secret ? { "data-secret": "" } : {}) },
      secret ? h("p", { class: "smk-screen-note" }, "Behind your screen: only you see this") : null, body);
  }

  // --- the other seats ------------------------------------------------------------------------------------
  const others = view.players.filter((p) => p.seat !== me).map((p) =>
    h("li", { class: `smk-seat${awaited.has(p.seat) ? " awaited" : ""}`, "data-player": p.seat },
      h("div", { class: "smk-seat-head" },
        h("strong", {}, names(p.seat)),
        h("span", { class: kindClass(p.sells) + " smk-chip" }, `sells ${goodsName(p.sells)}`),
        p.seat === view.dean ? h("span", { class: "smk-chip smk-dean-chip" }, "dean") : null,
        awaited.has(p.seat) ? h("span", { class: "smk-chip smk-wait" },
          view.phase === "choosing" ? "choosing…" : view.phase === "countdown" ? "deciding…" : "to play") : null,
        view.phase === "countdown" && p.has_answered ? h("span", { class: "smk-chip" }, "answered") : null),
      h("div", { class: "smk-line" }, h("span", { class: "smk-label" }, "Hand"),
        h("span", { class: "smk-backs", "data-hand-count": p.hand_count, role: "img",
          "aria-label": `${p.hand_count} cards in hand` },
          Array.from({ length: Math.min(p.hand_count, 10) }, () => h("span", { class: "smk-mini-back" }))),
        h("span", { class: "smk-carry" }, `${p.hand_count} card${p.hand_count === 1 ? "" : "s"}`)),
      screen(p, false)));
  const seats = others.length ? h("section", { class: "smk-others", "aria-labelledby": "smk-others-title" },
    h("h3", { id: "smk-others-title" }, me === null ? "The merchants" : "The other merchants"),
    h("ul", { class: "smk-seats" }, others)) : null;

  // --- discard pile and scoring ---------------------------------------------------------------------------
  const discard = h("section", { class: "smk-discard", "aria-label": "Goods out of the game" },
    h("h3", {}, "Out of the game"),
    view.discard.length ? h("div", { class: "smk-discard-cards" }, byValue(view.discard).map((g) => goodsCard(g.kind, g.value)))
      : h("p", { class: "note" }, "Nothing yet: unsold and disputed goods go here."));
  const scoring = view.details && view.scores ? scoreTable(view, names) : null;

  // every legal command is reachable, even one this drawing did not expect
  const rest = legal.map((c, i) => [c, i] as const).filter(([, i]) => !used.has(i));
  const extra = rest.length ? h("div", { class: "smk-extra" },
    rest.map(([c, i]) => button(i, describe(c), "smk-other-action"))) : null;

  return h("div", { class: "smk", "data-phase": view.phase, "data-round": view.round,
    "data-value": view.value ?? "" },
    h("p", { class: "smk-phase" }, PHASE_TEXT[view.phase] ?? view.phase,
      me !== null && awaited.has(me) ? h("strong", { class: "smk-yourturn" }, " — your decision") : null),
    h("div", { class: "smk-top" }, countdown, market), mine, extra, scoring, seats, discard);
}

function myAnswer(view: View, sellerName: (t: Target) => string): Child {
  const you = view.you;
  if (!you || view.phase !== "countdown" || !you.answered) return null;
  const what = you.stop && you.target !== null ? `You called “Stop!” on ${sellerName(you.target)}'s card`
    : "You passed at this value";
  return h("p", { class: "smk-answer", "data-secret": "" }, what, " (the others see only that you answered)");
}

/** In a real-time countdown: the time left on the value shown, as a draining bar (the table's game timer). */
function realtimeBar(table: TableView, view: View): Child {
  const timer = table.clock?.timer;
  if (!timer || view.phase !== "countdown") return null;
  const left = Math.max(0, timer.due - serverClock.now());
  const bar = h("span", { class: "smk-timer-fill" });
  bar.style.animationDuration = `${left.toFixed(2)}s`;
  return h("div", { class: "smk-timer", role: "timer", "aria-label": `${left.toFixed(1)} s left at ${view.value}`,
    "data-due": timer.due }, bar);
}

function scoreTable(view: View, names: (seat: number) => string): HTMLElement {
  const details = view.details ?? [];
  const winners = new Set(view.winners ?? []);
  const rows: [string, (d: SeatScore) => Child][] = [
    ["Money", (d) => d.money],
    ["Wealth", (d) => d.wealth],
    ["Least bought", (d) => `${d.least_bought} (${d.least_bought_kind ? goodsName(d.least_bought_kind) : "—"})`],
    ["Series", (d) => d.series],
    ["Camel slots", (d) => `${d.goods_kept} / ${d.capacity}`],
    ["Empty slots", (d) => d.capacity_penalty],
    ["Total", (d) => h("strong", {}, d.total)],
  ];
  return h("section", { class: "smk-scores", "aria-labelledby": "smk-scores-title" },
    h("h3", { id: "smk-scores-title" }, "Scoring"),
    h("div", { class: "smk-score-wrap" }, h("table", {},
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, ""), details.map((_, s) =>
        h("th", { scope: "col", class: winners.has(s) ? "winner" : "" }, names(s), winners.has(s) ? " ★" : "")))),
      h("tbody", {}, rows.map(([label, cell]) => h("tr", {}, h("th", { scope: "row" }, label),
        details.map((d) => h("td", {}, cell(d)))))))));
}

function describe(command: Command): string {
  switch (command.type) {
    case "samarkand.ChooseCard": return `Put up a card of ${command.value} for sale`;
    case "samarkand.Pass": return "Pass";
    case "samarkand.Stop": return `Stop! (${String(command.target)})`;
    case "samarkand.DiscardGoods": return `Leave behind ${goodsName(command.kind)} ${command.value}`;
    case "samarkand.ChooseLeastBought": return `Count ${goodsName(command.kind)} as least bought`;
    default: return JSON.stringify(command);
  }
}
