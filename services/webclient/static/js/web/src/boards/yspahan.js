// --- the game's words ------------------------------------------------------------------------------------
const QUARTERS = { bag: "Bags", barrel: "Barrels", chest: "Chests", vase: "Vases" };
const FLOOR_NAMES = {
    gold: "Gold", vase: "Vases", chest: "Chests", barrel: "Barrels", bag: "Bags", camels: "Camels",
};
const TOWER_TOP_DOWN = ["gold", "vase", "chest", "barrel", "bag", "camels"];
const GOODS_SYMBOL = { gold: "◎", vase: "⚱", chest: "▣", barrel: "◍", bag: "◒", camels: "∩∩" };
const CARD_NAMES = {
    take_camels: "3 camels",
    place_cube: "One goods",
    sell_camels: "Sell camels",
    build_gold_only: "Build: gold only",
    exchange: "Exchange",
    take_gold: "3 gold",
    caravan_cube: "To the caravan",
    sell_gold: "Sell gold",
    build_camels_only: "Build: camels only",
};
const CARD_TEXT = {
    take_camels: "Take 3 camels from the supply.",
    place_cube: "Put one goods cube from your reserve in any shop.",
    sell_camels: "Return up to 4 camels: 2 points each.",
    build_gold_only: "Build one building paying only its gold.",
    exchange: "Swap gold for camels or camels for gold, one for one.",
    take_gold: "Take 3 gold from the supply.",
    caravan_cube: "Put one goods cube from your reserve on the caravan.",
    sell_gold: "Return up to 10 gold: 1 point each.",
    build_camels_only: "Build one building paying only its camels.",
};
// (id, name, camels, gold, what it does): the player board's order.
const BUILDINGS = [
    ["pen", "Pen", 2, 0, "+1 camel when taking camels from the tower"],
    ["stall", "Stall", 2, 2, "+2 gold when taking gold from the tower"],
    ["hammam", "Hammam", 2, 2, "move the supervisor up to 3 squares more or less for free"],
    ["caravanserai", "Caravanserai", 3, 3, "draw a card for each of your goods sent to the caravan"],
    ["bazaar", "Bazaar", 4, 4, "+2 points per complete souk at each week's end"],
    ["crane", "Crane", 4, 4, "+1 goods when filling shops from the tower"],
];
const BUILDING_POINTS = [0, 0, 5, 5, 5, 10];
const PHASES = {
    setup: "Setting up",
    supply: "Rolling the dice",
    action: "Choosing an action",
    place_cubes: "Placing goods in the souks",
    move_supervisor: "Moving the supervisor",
    ship_order: "Sending goods to the caravan",
    ship_answer: "A camel to keep the goods?",
    build: "Building",
    end_of_turn: "End of the turn",
    day_over: "End of the day",
    over: "Game over",
};
const SOUK_POINTS = {
    "BAG-3": 3, "BAG-4": 4, "BAG-5": 6, "BAG-6": 8,
    "BARREL-2": 3, "BARREL-3": 4, "BARREL-4": 6, "BARREL-5": 8,
    "CHEST-2": 4, "CHEST-3": 6, "CHEST-4": 8,
    "VASE-1": 4, "VASE-2": 6, "VASE-3": 12,
};
// --- the city's geometry ---------------------------------------------------------------------------------
// A grid of 18 x 12 cells: the road is row 4 (W10..W1, C at column 10, E1..E7) and column 10 (N4..N1, C,
// S1..S7). Quadrants as on the board (DATA.md): NW chests, NE vases, SW bags, SE barrels. Every shop that faces a
// square (DATA.md's table) touches that square here; the others lie behind them.
const COLS = 18;
const ROWS = 12;
function squareCell(square) {
    if (square === "C")
        return [10, 4];
    const arm = square[0];
    const k = Number(square.slice(1));
    if (arm === "W")
        return [10 - k, 4];
    if (arm === "E")
        return [10 + k, 4];
    if (arm === "N")
        return [10, 4 - k];
    return [10, 4 + k];
}
const SQUARES = [
    "C",
    ...Array.from({ length: 10 }, (_, i) => `W${i + 1}`),
    ...Array.from({ length: 7 }, (_, i) => `E${i + 1}`),
    ...Array.from({ length: 4 }, (_, i) => `N${i + 1}`),
    ...Array.from({ length: 7 }, (_, i) => `S${i + 1}`),
];
/** Each shop's cells: [column, row, width, height]. */
const SHOP_CELLS = {
    // bags (south-west)
    "BAG-3.1": [9, 5, 1, 1], "BAG-3.2": [7, 5, 2, 1], "BAG-3.3": [9, 6, 1, 1],
    "BAG-4.1": [9, 8, 1, 2], "BAG-4.2": [9, 10, 1, 2], "BAG-4.3": [8, 8, 1, 2], "BAG-4.4": [8, 10, 1, 2],
    "BAG-5.1": [5, 5, 2, 1], "BAG-5.2": [3, 5, 2, 1], "BAG-5.3": [3, 6, 2, 1], "BAG-5.4": [5, 6, 2, 1],
    "BAG-5.5": [4, 7, 2, 1],
    "BAG-6.1": [1, 5, 2, 1], "BAG-6.2": [0, 5, 1, 2], "BAG-6.3": [1, 6, 2, 1], "BAG-6.4": [0, 7, 2, 1],
    "BAG-6.5": [0, 8, 2, 1], "BAG-6.6": [2, 7, 2, 1],
    // barrels (south-east)
    "BARREL-2.1": [11, 5, 1, 1], "BARREL-2.2": [12, 5, 1, 1],
    "BARREL-3.1": [11, 6, 1, 2], "BARREL-3.2": [12, 6, 1, 2], "BARREL-3.3": [12, 8, 2, 1],
    "BARREL-4.1": [13, 5, 2, 1], "BARREL-4.2": [15, 5, 2, 1], "BARREL-4.3": [13, 6, 2, 1], "BARREL-4.4": [15, 6, 2, 1],
    "BARREL-5.1": [11, 8, 1, 2], "BARREL-5.2": [11, 10, 1, 2], "BARREL-5.3": [12, 9, 2, 1],
    "BARREL-5.4": [12, 10, 2, 1], "BARREL-5.5": [12, 11, 2, 1],
    // chests (north-west)
    "CHEST-2.1": [8, 3, 1, 1], "CHEST-2.2": [6, 3, 2, 1],
    "CHEST-3.1": [4, 3, 2, 1], "CHEST-3.2": [2, 3, 2, 1], "CHEST-3.3": [0, 3, 2, 1],
    "CHEST-4.1": [9, 2, 1, 2], "CHEST-4.2": [9, 0, 1, 1], "CHEST-4.3": [9, 1, 1, 1], "CHEST-4.4": [8, 0, 1, 2],
    // vases (north-east)
    "VASE-1.1": [11, 3, 1, 1],
    "VASE-2.1": [11, 1, 1, 1], "VASE-2.2": [12, 1, 1, 1],
    "VASE-3.1": [13, 3, 2, 1], "VASE-3.2": [15, 3, 2, 1], "VASE-3.3": [17, 3, 1, 1],
};
/** Squares along the road between two squares of the cross (it is a tree: one simple path). */
function distance(a, b) {
    const place = (s) => (s === "C" ? ["", 0] : [s[0], Number(s.slice(1))]);
    const [armA, i] = place(a);
    const [armB, j] = place(b);
    return armA === armB || !armA || !armB ? Math.abs(i - j) : i + j;
}
function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
        if (value === null || value === undefined || value === false)
            continue;
        node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
        if (child === null || child === undefined || child === false)
            continue;
        node.append(child);
    }
    return node;
}
function plural(n, one, many = `${one}s`) {
    return `${n} ${n === 1 ? one : many}`;
}
function seatName(props, seat) {
    return props.names[seat] || `Seat ${seat + 1}`;
}
function soukOf(shop) {
    return shop.slice(0, shop.lastIndexOf("."));
}
function shopLabel(shop) {
    const souk = soukOf(shop);
    const [quarter, size] = souk.split("-");
    return `shop ${shop.slice(shop.lastIndexOf(".") + 1)} of the ${size}-shop souk of ${QUARTERS[quarter.toLowerCase()]}`;
}
// --- the legal commands, placed once each ----------------------------------------------------------------
class Legal {
    props;
    used = new Set();
    commands;
    constructor(props) {
        this.props = props;
        this.commands = (props.table.legal ?? []);
    }
    /** Indices of the commands `pick` matches that no place has claimed yet. */
    find(pick) {
        const out = [];
        this.commands.forEach((command, index) => {
            if (!this.used.has(index) && pick(command))
                out.push(index);
        });
        return out;
    }
    /** The button for command `index`: its text, its label for people and screen readers. */
    button(index, text, label = text, className = "") {
        this.used.add(index);
        const node = el("button", { type: "button", "data-legal": index, "aria-label": label, title: label,
            class: `ysp-legal ${className}`.trim() }, text);
        node.addEventListener("click", () => this.props.play(index));
        return node;
    }
    unclaimed() {
        return this.commands.map((_, index) => index).filter((index) => !this.used.has(index));
    }
}
// --- the board -------------------------------------------------------------------------------------------
function isView(value) {
    return typeof value === "object" && value !== null && value.type === "yspahan.YspahanView";
}
function render(root, props) {
    const table = props.table;
    const view = table.view;
    if (!isView(view)) {
        root.append(el("p", { class: "ysp-empty" }, "The game has not started yet."));
        return;
    }
    const legal = new Legal(props);
    const me = table.seat ?? null;
    const section = el("section", {
        class: "ysp", "data-phase": view.phase, "aria-label": "Yspahan",
        "data-players": view.players.length,
    });
    section.append(status(view, props));
    // what the game waits for, under the status line; filled last (it takes the commands no place claimed)
    const asked = el("div", { class: "ysp-prompt", role: "group", "aria-label": "What happens now" });
    section.append(asked);
    const main = el("div", { class: "ysp-main" });
    main.append(city(view, props, legal), side(view, props, legal));
    section.append(main);
    section.append(players(view, props, legal, me));
    fillPrompt(asked, view, props, legal);
    root.append(section);
}
function status(view, props) {
    const phase = PHASES[view.phase] ?? view.phase;
    const waiting = view.awaiting.map((seat) => seatName(props, seat));
    const when = view.week ? `Week ${view.week} of 3 · Day ${view.day} of 7` : "Before the first day";
    return el("header", { class: "ysp-status" }, el("span", { class: "ysp-when" }, when), el("span", { class: "ysp-phase" }, phase), view.over ? el("span", { class: "ysp-waiting" }, "The game is over")
        : waiting.length ? el("span", { class: "ysp-waiting" }, `Waiting for ${waiting.join(", ")}`) : null, view.order.length ? el("span", { class: "ysp-order" }, `Today's order: ${view.order.map((seat) => seatName(props, seat)).join(" → ")}`) : null);
}
// The city: quarters, souks and shops, the road and the supervisor.
function city(view, props, legal) {
    const grid = el("div", { class: "ysp-city", role: "group", "aria-label": "The city of Ispahan",
        style: `--cols:${COLS};--rows:${ROWS}` });
    const place = (node, x, y, w = 1, h = 1) => {
        node.style.gridColumn = `${x + 1} / span ${w}`;
        node.style.gridRow = `${y + 1} / span ${h}`;
        return node;
    };
    // quarter grounds, with their names
    const grounds = [
        ["chest", 0, 0, 10, 4], ["vase", 11, 0, 7, 4], ["bag", 0, 5, 10, 7], ["barrel", 11, 5, 7, 7],
    ];
    for (const [quarter, x, y, w, h] of grounds) {
        grid.append(place(el("div", { class: `ysp-ground ysp-q-${quarter}`, "aria-hidden": "true" }, el("span", { class: "ysp-ground-name" }, `${GOODS_SYMBOL[quarter]} ${QUARTERS[quarter]}`)), x, y, w, h));
    }
    // the road
    const mover = view.turn_seat;
    const moveValue = view.pending.move_value;
    const hammam = mover !== null && view.players[mover]?.buildings.includes("hammam");
    for (const square of SQUARES) {
        const [x, y] = squareCell(square);
        const here = view.supervisor === square;
        const moves = legal.find((c) => c.type === "yspahan.MoveSupervisor" && c.square === square);
        let node;
        if (moves.length) {
            const steps = distance(view.supervisor, square);
            const gold = Math.max(0, Math.abs(steps - moveValue) - (hammam ? 3 : 0));
            const cost = gold ? ` (${plural(gold, "gold", "gold")})` : "";
            node = legal.button(moves[0], square, `Move the supervisor to ${square}, ${plural(steps, "square")}${cost}`, "ysp-square ysp-target");
            if (gold)
                node.append(el("span", { class: "ysp-cost", "aria-hidden": "true" }, `${gold}g`));
        }
        else {
            node = el("div", { class: "ysp-square", title: square, "data-square": square }, el("span", { class: "ysp-sq" }, square));
        }
        node.dataset.square = square;
        if (here) {
            node.classList.add("ysp-here");
            node.append(el("span", { class: "ysp-supervisor", role: "img", "aria-label": `The supervisor is on ${square}` }));
        }
        grid.append(place(node, x, y));
    }
    // the shops
    const owners = new Map(view.shops.map((s) => [s.shop, s.seat]));
    const toShip = new Set(view.pending.shops_to_ship);
    const quarterNow = view.phase === "place_cubes" ? view.pending.quarter : null;
    for (const [shop, [x, y, w, h]] of Object.entries(SHOP_CELLS)) {
        const souk = soukOf(shop);
        const quarter = souk.split("-")[0].toLowerCase();
        const first = shop.endsWith(".1");
        const owner = owners.get(shop);
        const targets = legal.find((c) => (c.type === "yspahan.PlaceCube" || c.type === "yspahan.ShipCube"
            || (c.type === "yspahan.PlayCard" && c.card === "place_cube")) && c.shop === shop);
        const rank = Object.keys(SOUK_POINTS).filter((k) => k.startsWith(souk.split("-")[0] + "-")).indexOf(souk);
        const classes = [`ysp-shop`, `ysp-q-${quarter}`, `ysp-rank-${rank}`];
        if (toShip.has(shop))
            classes.push("ysp-to-ship");
        if (view.pending.shipping === shop)
            classes.push("ysp-shipping");
        if (quarterNow === quarter)
            classes.push("ysp-now");
        const what = `${shopLabel(shop)} (${SOUK_POINTS[souk]} points when complete)`;
        const cube = owner !== undefined
            ? el("span", { class: `ysp-cube ysp-seat-${owner}`, role: "img", "aria-label": `${seatName(props, owner)}'s goods` })
            : null;
        let node;
        if (targets.length) {
            const command = legal.commands[targets[0]];
            const label = command.type === "yspahan.ShipCube"
                ? `Send the goods of ${shop} to the caravan first`
                : command.type === "yspahan.PlayCard" ? `Play "One goods": a cube in ${shop}, ${what}`
                    : `Place a goods cube in ${shop}, ${what}`;
            node = legal.button(targets[0], "", label, classes.join(" ")); // a second one would go to the prompt
        }
        else {
            node = el("div", { class: classes.join(" "), title: `${shop}: ${what}` });
        }
        node.dataset.shop = shop;
        if (first)
            node.append(el("span", { class: "ysp-points", "aria-hidden": "true" }, String(SOUK_POINTS[souk])));
        if (cube)
            node.append(cube);
        grid.append(place(node, x, y, w, h));
    }
    return grid;
}
function die(value, yellow) {
    const faces = ["", "⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
    return el("span", { class: `ysp-die${yellow ? " ysp-yellow" : ""}`, "aria-hidden": "true" }, faces[value] ?? String(value));
}
// The dice tower and the caravan.
function side(view, props, legal) {
    const aside = el("div", { class: "ysp-side" });
    const tower = el("div", { class: "ysp-tower", role: "group", "aria-label": "The dice tower" }, el("h3", {}, "Dice tower"));
    const rolls = legal.find((c) => c.type === "yspahan.RollDice");
    if (rolls.length) {
        const row = el("div", { class: "ysp-roll" });
        for (const index of rolls) {
            const n = legal.commands[index].yellow ?? 0;
            const text = n ? `Roll with ${n} yellow (${n} gold)` : "Roll the dice";
            row.append(legal.button(index, text, n ? `Roll the dice with ${plural(n, "yellow die", "yellow dice")}, paying ${n} gold`
                : "Roll the white dice"));
        }
        tower.append(row);
    }
    for (const floor of TOWER_TOP_DOWN) {
        const f = view.tower.find((t) => t.floor === floor);
        const dice = el("span", { class: "ysp-dice" });
        if (f && f.value) {
            for (let i = 0; i < f.white; i++)
                dice.append(die(f.value, false));
            for (let i = 0; i < f.yellow; i++)
                dice.append(die(f.value, true));
        }
        const count = f && f.value ? `${plural(f.white + f.yellow, "die", "dice")} showing ${f.value}${f.yellow ? ` (${f.yellow} yellow)` : ""}` : "empty";
        const floorNode = el("div", { class: `ysp-floor ysp-f-${floor}`, "data-floor": floor, role: "group",
            "aria-label": `${FLOOR_NAMES[floor]} floor: ${count}` }, el("span", { class: "ysp-floor-name" }, `${GOODS_SYMBOL[floor]} ${FLOOR_NAMES[floor]}`), dice);
        // the floor's actions, then the same goods with one more die for a discarded card (a card's name each)
        const actions = el("span", { class: "ysp-floor-actions" });
        const discards = el("span", { class: "ysp-floor-actions ysp-discards" }, el("span", {}, "+1 die, discarding:"));
        for (const index of legal.find((c) => c.type === "yspahan.SelectDice" && c.floor === floor)) {
            const c = legal.commands[index];
            (c.discard ? discards : actions).append(selectButton(legal, index, c, f, view));
        }
        if (actions.childElementCount)
            floorNode.append(actions);
        if (discards.childElementCount > 1)
            floorNode.append(discards);
        tower.append(floorNode);
    }
    const none = legal.find((c) => c.type === "yspahan.SelectDice" && c.floor === null);
    if (none.length) {
        const row = el("div", { class: "ysp-roll" }, el("span", {}, "No dice for you:"));
        for (const index of none) {
            const c = legal.commands[index];
            row.append(c.action === "build" ? legal.button(index, "Build instead", "No dice left: build instead")
                : legal.button(index, "Draw a card", "No dice left: draw a card"));
        }
        tower.append(row);
    }
    aside.append(tower);
    // the caravan: rows bottom (2 points) to top (0 points); a cube fills the bottom row first
    const width = view.caravan_width;
    const rows = Math.max(1, Math.round(view.caravan_capacity / Math.max(1, width)));
    const caravan = el("div", { class: "ysp-caravan", role: "group",
        "aria-label": `The caravan: ${view.caravan.length} of ${view.caravan_capacity} camels loaded` }, el("h3", {}, `Caravan ${view.caravan.length}/${view.caravan_capacity}`));
    for (let row = rows - 1; row >= 0; row--) {
        const line = el("div", { class: "ysp-caravan-row" }, el("span", { class: "ysp-row-points", title: `${2 - row} points on entry` }, `${Math.max(0, 2 - row)} pt`));
        for (let i = 0; i < width; i++) {
            const seat = view.caravan[row * width + i];
            line.append(seat === undefined ? el("span", { class: "ysp-camel" }, camel())
                : el("span", { class: `ysp-camel ysp-loaded ysp-seat-${seat}`, role: "img",
                    "aria-label": `${seatName(props, seat)}'s goods` }, camel(), el("span", { class: "ysp-cube" })));
        }
        caravan.append(line);
    }
    aside.append(caravan);
    aside.append(el("p", { class: "ysp-supply" }, `Draw pile ${plural(view.deck_size, "card")} · discards ${view.discard.length} · supply: ${view.gold_supply} gold, ${plural(view.camel_supply, "camel")}`));
    return aside;
}
const SVG = "http://www.w3.org/2000/svg";
/** A camel's silhouette (two humps, the neck rising to the right). */
function camel() {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 32 24");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", "M2 14 Q4 8 9 9 Q12 3 15 8 Q18 3 21 9 L24 9 L26 4 L29 4 L31 6 L28 7 L27 13 Q26 15 24 15"
        + " L24 23 L22 23 L21 16 L12 16 L11 23 L9 23 L8 15 Q4 15 2 14 Z");
    svg.append(path);
    return svg;
}
function selectButton(legal, index, c, f, view) {
    const floor = c.floor;
    const dice = f ? f.white + (view.seat === view.order[0] ? f.yellow : 0) + (c.discard ? 1 : 0) : 0;
    const plus = c.discard ? ` (+1 die: discard "${CARD_NAMES[c.discard]}")` : "";
    if (c.action === "floor") {
        // what the seat gets: a die each, the building's bonus (Pen, Stall, Crane), within the supply or reserve
        const me = view.seat !== null ? view.players[view.seat] : undefined;
        const has = (b) => !!me?.buildings.includes(b);
        const camels = Math.min(dice + (has("pen") ? 1 : 0), view.camel_supply);
        const gold = Math.min(dice + (has("stall") ? 2 : 0), view.gold_supply);
        const goods = Math.min(dice + (has("crane") ? 1 : 0), me?.reserve ?? dice);
        const what = floor === "camels" ? `Take ${plural(camels, "camel")}` : floor === "gold" ? `Take ${gold} gold`
            : `Place ${plural(goods, "goods", "goods")} in ${QUARTERS[floor]}`;
        return legal.button(index, c.discard ? CARD_NAMES[c.discard] : what, `${what}${plus}`, c.discard ? "ysp-minor" : "");
    }
    if (c.action === "supervisor") {
        return legal.button(index, `Supervisor ${f?.value ?? 0}`, `Move the supervisor ${plural(f?.value ?? 0, "square")} (${FLOOR_NAMES[floor]} floor)`);
    }
    if (c.action === "build")
        return legal.button(index, "Build", `Take the ${FLOOR_NAMES[floor]} dice to build`);
    return legal.button(index, "Card", `Take the ${FLOOR_NAMES[floor]} dice to draw a card`);
}
// Each player's board: score, gold, camels, goods cubes, buildings, cards.
function players(view, props, legal, me) {
    const list = el("div", { class: "ysp-players" });
    const order = view.players.map((p) => p.seat);
    if (me !== null)
        order.sort((a, b) => (a === me ? -1 : b === me ? 1 : a - b));
    for (const seat of order) {
        const p = view.players[seat];
        const mine = seat === me;
        const classes = ["ysp-player", `ysp-seat-${seat}`];
        if (mine)
            classes.push("ysp-mine");
        if (view.awaiting.includes(seat))
            classes.push("ysp-awaited");
        const board = el("div", { class: classes.join(" "), "data-player": seat, role: "group",
            "aria-label": `${seatName(props, seat)}${mine ? " (you)" : ""}` });
        board.append(el("h3", {}, el("span", { class: `ysp-token ysp-seat-${seat}`, "aria-hidden": "true" }), `${seatName(props, seat)}${mine ? " (you)" : ""}`, view.turn_seat === seat && !view.over ? el("span", { class: "ysp-turn" }, "turn") : null));
        board.append(el("p", { class: "ysp-stock" }, el("span", { class: "ysp-score", title: "points" }, `${p.score} pts`), el("span", { class: "ysp-gold", title: "gold" }, `${p.gold} gold`), el("span", { class: "ysp-camels", title: "camels" }, plural(p.camels, "camel")), el("span", { class: "ysp-reserve", title: "goods cubes in reserve" }, `${p.reserve} goods in reserve`), mine ? null : el("span", { class: "ysp-hand-size", "data-hand-size": p.hand_size, title: "cards in hand" }, `${plural(p.hand_size, "card")}`)));
        // the buildings, in the player board's order
        const row = el("div", { class: "ysp-buildings" });
        const built = p.buildings.length;
        for (const [id, name, camels, gold, help] of BUILDINGS) {
            const has = p.buildings.includes(id);
            const tile = el("div", { class: `ysp-building${has ? " ysp-built" : ""}`, "data-building": id,
                title: `${name}: ${help}. Costs ${plural(camels, "camel")}, ${gold} gold` }, el("span", { class: "ysp-bname" }, name), el("span", { class: "ysp-bcost" }, has ? "built" : `${camels} camels · ${gold} gold`));
            if (mine) {
                const points = BUILDING_POINTS[Math.min(built, BUILDING_POINTS.length - 1)];
                const bonus = points ? `, ${points} points` : "";
                for (const index of legal.find((c) => c.type === "yspahan.Build" && c.building === id)) {
                    const c = legal.commands[index];
                    const text = c.card ? `Build with "${CARD_NAMES[c.card]}"` : "Build";
                    tile.append(legal.button(index, text, `Build the ${name}${c.card ? ` playing "${CARD_NAMES[c.card]}"` : ""}${bonus}`, "ysp-minor"));
                }
            }
            row.append(tile);
        }
        board.append(row);
        if (mine && view.hand)
            board.append(hand(view.hand, legal));
        list.append(board);
    }
    return list;
}
function hand(cards, legal) {
    const node = el("div", { class: "ysp-hand", "data-secret": "hand", role: "group", "aria-label": "Your cards" }, el("h4", {}, `Your cards (${cards.length})`));
    // each card held is a card on the table (two copies: two cards); the plays sit on the first copy
    for (const card of cards) {
        const face = el("div", { class: `ysp-card ysp-c-${card}`, "data-card": card }, el("strong", {}, CARD_NAMES[card]), el("span", { class: "ysp-card-text" }, CARD_TEXT[card]));
        const plays = legal.find((c) => c.type === "yspahan.PlayCard" && c.card === card);
        if (plays.length) {
            const buttons = el("span", { class: "ysp-card-plays" });
            for (const index of plays) {
                const c = legal.commands[index];
                const n = c.count ?? 0;
                if (card === "sell_camels")
                    buttons.append(legal.button(index, `${n}`, `Play "Sell camels": ${plural(n, "camel")} for ${2 * n} points`));
                else if (card === "sell_gold")
                    buttons.append(legal.button(index, `${n}`, `Play "Sell gold": ${n} gold for ${plural(n, "point")}`));
                else if (card === "exchange") {
                    const text = c.give === "gold" ? `${n} gold→camels` : `${n} camels→gold`;
                    buttons.append(legal.button(index, text, c.give === "gold" ? `Play "Exchange": ${n} gold for ${plural(n, "camel")}`
                        : `Play "Exchange": ${plural(n, "camel")} for ${n} gold`));
                }
                else
                    buttons.append(legal.button(index, "Play", `Play "${CARD_NAMES[card]}": ${CARD_TEXT[card]}`));
            }
            face.append(buttons);
        }
        node.append(face);
    }
    if (!cards.length)
        node.append(el("p", { class: "ysp-none" }, "No cards"));
    return node;
}
// What the game waits for now, with the answers that have no place on the board (keep the goods, end the turn).
function fillPrompt(node, view, props, legal) {
    const me = props.table.seat;
    const acting = me !== null && view.awaiting.includes(me);
    const mover = view.turn_seat !== null ? seatName(props, view.turn_seat) : "The player";
    let text = "";
    if (view.over) {
        const best = Math.max(...view.players.map((p) => p.score));
        const winners = view.players.filter((p) => p.score === best).map((p) => seatName(props, p.seat));
        text = `Game over: ${winners.join(" and ")} ${winners.length > 1 ? "win" : "wins"} with ${best} points.`;
    }
    else if (view.phase === "place_cubes" && view.pending.quarter) {
        const goods = `${plural(view.pending.cubes_left, "goods", "goods")} left to place in ${QUARTERS[view.pending.quarter]}`;
        text = acting ? `${goods}: click a lit shop.` : `${mover}: ${goods}.`;
    }
    else if (view.phase === "move_supervisor") {
        const squares = plural(view.pending.move_value, "square");
        text = acting ? `Move the supervisor ${squares} (±1 square per gold): click a lit square.`
            : `${mover} moves the supervisor ${squares} (±1 square per gold).`;
    }
    else if (view.phase === "ship_order") {
        text = `The supervisor stops by ${view.pending.shops_to_ship.join(" and ")}: `
            + (acting ? "which goods go to the caravan first? Click a lit shop." : `${mover} chooses which goods go first.`);
    }
    else if (view.phase === "ship_answer" && view.pending.shipping) {
        const owner = view.shops.find((s) => s.shop === view.pending.shipping)?.seat;
        text = owner === me
            ? `Your goods in ${view.pending.shipping} go to the caravan, unless you give up a camel to keep them (a cube from your reserve goes instead).`
            : `${owner !== undefined ? seatName(props, owner) : "Its owner"} decides whether the goods in ${view.pending.shipping} go to the caravan.`;
    }
    else if (view.phase === "supply" && view.awaiting.includes(me ?? -1)) {
        text = "Roll the dice: buy up to 3 yellow dice for 1 gold each.";
    }
    else if (view.phase === "action" && view.awaiting.includes(me ?? -1)) {
        text = "Take a group of dice from the tower (its goods, the supervisor or a card), or play a card.";
    }
    else if (view.phase === "end_of_turn" && view.awaiting.includes(me ?? -1)) {
        text = "Play cards or build, then end your turn.";
    }
    else if (view.phase === "build" && view.awaiting.includes(me ?? -1)) {
        text = "Build one building on your board.";
    }
    if (text)
        node.append(el("p", {}, text));
    const keep = legal.find((c) => c.type === "yspahan.KeepCube");
    for (const index of keep)
        node.append(legal.button(index, "Keep the goods (pay 1 camel)", "Give up a camel: the goods stay in the shop, a cube from your reserve goes to the caravan"));
    for (const index of legal.find((c) => c.type === "yspahan.LetCubeGo")) {
        node.append(legal.button(index, "Send them to the caravan", "Let the goods go to the caravan"));
    }
    for (const index of legal.find((c) => c.type === "yspahan.EndTurn"))
        node.append(legal.button(index, "End the turn", "End your turn"));
    for (const index of legal.unclaimed()) {
        const command = legal.commands[index];
        node.append(legal.button(index, String(command.type ?? "command").replace("yspahan.", ""), JSON.stringify(command)));
    }
}
export const board = { title: "Yspahan", render };
