// The generic board: any game's view as a readable tree, and its legal commands as buttons. Used for a game with
// no board of its own in the registry; good enough to play any game to the end.
import { h } from "./dom.js";
/** A command's words: its type without the game's prefix, then its fields (`PlaceCube quarter=bags souk=2`). */
export function describeCommand(command) {
    if (!command || typeof command !== "object")
        return JSON.stringify(command);
    const { type, ...fields } = command;
    const name = typeof type === "string" ? type.slice(type.indexOf(".") + 1) : "command";
    const words = Object.entries(fields).map(([k, v]) => {
        const text = typeof v === "string" ? v : JSON.stringify(v);
        return `${k}=${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
    });
    return [name, ...words].join(" ");
}
function shortType(value) {
    return typeof value === "string" ? value.slice(value.indexOf(".") + 1) : "";
}
/** A value as nested lists: objects as term/definition lists, arrays as numbered lists, scalars as text. */
export function tree(value, depth = 0) {
    if (value === null || value === undefined)
        return h("span", { class: "tree-null" }, "—");
    if (Array.isArray(value)) {
        if (value.length === 0)
            return h("span", { class: "tree-null" }, "none");
        if (value.every((v) => v === null || typeof v !== "object")) {
            return h("span", { class: "tree-scalar" }, value.map((v) => (v === null ? "—" : String(v))).join(", "));
        }
        const rows = value;
        const flat = rows.every((v) => v !== null && typeof v === "object" && !Array.isArray(v)
            && Object.values(v).every((x) => x === null || typeof x !== "object" || (Array.isArray(x)
                && x.every((y) => y === null || typeof y !== "object"))));
        if (flat) {
            // objects of plain values (players, floors, cards): one table row each
            const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => k !== "type");
            return h("div", { class: "tree-table" }, h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), keys.map((k) => h("th", { scope: "col" }, k)))), h("tbody", {}, rows.map((r, i) => h("tr", {}, h("th", { scope: "row" }, i), keys.map((k) => h("td", {}, tree(r[k], depth + 1))))))));
        }
        return h("ol", { class: "tree-list", start: 0 }, value.map((item) => h("li", {}, tree(item, depth + 1))));
    }
    if (typeof value === "object") {
        const entries = Object.entries(value).filter(([k]) => k !== "type");
        const kind = shortType(value.type);
        return h("dl", { class: "tree" }, kind && depth > 0 ? h("div", { class: "tree-kind" }, kind) : null, entries.map(([k, v]) => h("div", { class: "tree-row" }, h("dt", {}, k), h("dd", {}, tree(v, depth + 1)))));
    }
    return h("span", { class: "tree-scalar" }, String(value));
}
export const genericBoard = {
    title: "",
    render(root, props) {
        const { table } = props;
        const legal = table.legal ?? [];
        root.append(h("section", { class: "legal", "aria-label": "Your moves" }, h("h3", {}, legal.length ? "Your moves" : table.seat === null ? "Watching" : "Nothing to do now"), legal.length ? h("div", { class: "legal-buttons" }, legal.map((command, i) => h("button", { type: "button", "data-legal": i, onclick: () => props.play(i) }, describeCommand(command))))
            : null), h("section", { class: "generic-view", "aria-label": "The table as you see it" }, h("h3", {}, "The table"), tree(table.view)));
    },
};
