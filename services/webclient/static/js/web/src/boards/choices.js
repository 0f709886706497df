// A long list of legal commands (Istanbul's answers to a card: up to ~175; 1001 Karawane's equipment: 84) made
// findable: the buttons in named groups, each a <details> (open: every button stays reachable at once, as the board
// contract asks; a person may fold the ones of no interest), an index of the groups with their counts that opens
// and scrolls to one, a search over the buttons' sentences and, where a board names them, facets (a select per
// property: "camel drivers: 2"). The search and the facets only narrow what the person asked to see; with none set
// every button shows. Short lists (at most `threshold` buttons) are drawn as plain groups, without any of it.
//
// What a person set here (the search, the facets, the groups folded) is kept across renders of the same decision
// (the shell draws the board again at every push: in Istanbul the other seats answer meanwhile), by the list's key
// and its commands: another decision starts afresh. It is the page's state, never the game's.
const kept = new Map();
function settingsOf(options) {
    const found = kept.get(options.key);
    if (found && found.decision === options.decision)
        return found;
    const fresh = { decision: options.decision, search: "", facets: {}, folded: new Set() };
    kept.set(options.key, fresh);
    return fresh;
}
function make(tag, attrs = {}, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs))
        e.setAttribute(k, v);
    if (text !== undefined)
        e.textContent = text;
    return e;
}
/** The list: a section holding the toolbar (long lists) and the groups. */
export function choiceList(groups, options) {
    const total = groups.reduce((n, g) => n + g.buttons.length, 0);
    const root = make("div", { class: "choices", "data-choices": options.key, role: "group",
        "aria-label": options.label });
    if (total <= (options.threshold ?? 24)) {
        for (const group of groups) {
            const box = make("div", { class: `choice-group ${options.groupClass ?? ""}`.trim(), "data-group": group.key,
                ...(options.groupAttrs?.(group) ?? {}) });
            const head = make("span", { class: options.headClass ?? "choice-head" });
            head.append(make("span", {}, group.heading));
            box.append(head, ...group.buttons);
            root.append(box);
        }
        return root;
    }
    const settings = settingsOf(options);
    const id = (part) => `${options.key}-${part}`;
    // the toolbar: the search, the facets, a count of what shows
    const tools = make("div", { class: "choice-tools" });
    const search = make("input", { type: "search", id: id("find"), class: "choice-find", autocomplete: "off",
        placeholder: "Find a move: a word, a good, a place…",
        "aria-label": `Find among ${total} moves` });
    search.value = settings.search;
    tools.append(search);
    const selects = [];
    for (const facet of options.facets ?? []) {
        const select = make("select", { id: id(`facet-${facet.name}`), class: "choice-facet",
            "aria-label": facet.label });
        select.append(make("option", { value: "" }, `${facet.label}: any`));
        for (const v of facet.values)
            select.append(make("option", { value: v }, `${facet.label}: ${v}`));
        select.value = settings.facets[facet.name] ?? "";
        selects.push([facet, select]);
        const wrap = make("label", { class: "choice-facet-wrap" });
        wrap.append(select);
        tools.append(wrap);
    }
    const shown = make("span", { class: "choice-count", role: "status", id: id("count") });
    const clear = make("button", { type: "button", class: "choice-clear", id: id("clear") }, "Show all");
    tools.append(shown, clear);
    // the index and the groups
    const index = make("nav", { class: "choice-index", id: id("index"), "aria-label": `${options.label}: groups` });
    const boxes = [];
    for (const group of groups) {
        const box = make("details", { class: `choice-group ${options.groupClass ?? ""}`.trim(), "data-group": group.key,
            ...(options.groupAttrs?.(group) ?? {}) });
        box.open = !settings.folded.has(group.key);
        const count = make("span", { class: "choice-n" });
        const summary = make("summary", { class: options.headClass ?? "choice-head" });
        summary.append(make("span", {}, group.heading), " ", count);
        box.append(summary, ...group.buttons);
        box.addEventListener("toggle", () => {
            if (box.open)
                settings.folded.delete(group.key);
            else
                settings.folded.add(group.key);
        });
        const chip = make("button", { type: "button", class: "choice-chip", "data-group-chip": group.key });
        chip.addEventListener("click", () => {
            box.open = true;
            box.scrollIntoView({ block: "nearest" });
            (box.querySelector("[data-legal]:not([hidden])") ?? summary).focus();
        });
        index.append(chip);
        boxes.push([group, box, count, chip]);
        root.append(box);
    }
    root.prepend(tools, index);
    function apply() {
        const words = settings.search.toLowerCase().split(/\s+/).filter(Boolean);
        let showing = 0;
        for (const [group, box, count, chip] of boxes) {
            let here = 0;
            for (const b of group.buttons) {
                const text = `${b.getAttribute("aria-label") ?? ""} ${b.textContent ?? ""} ${group.heading}`.toLowerCase();
                const ok = words.every((w) => text.includes(w)) &&
                    selects.every(([f, s]) => !s.value || b.getAttribute(`data-facet-${f.name}`) === s.value);
                b.hidden = !ok;
                if (ok)
                    here++;
            }
            showing += here;
            box.hidden = here === 0;
            count.textContent = here === group.buttons.length ? `(${here})` : `(${here} of ${group.buttons.length})`;
            chip.textContent = `${group.heading} · ${here}`;
            chip.hidden = here === 0;
        }
        const narrowed = showing !== total;
        shown.textContent = narrowed ? `${showing} of ${total} moves` : `${total} moves`;
        clear.hidden = !narrowed;
    }
    search.addEventListener("input", () => {
        settings.search = search.value;
        apply();
    });
    for (const [facet, select] of selects) {
        select.addEventListener("change", () => {
            settings.facets[facet.name] = select.value;
            apply();
        });
    }
    clear.addEventListener("click", () => {
        settings.search = "";
        settings.facets = {};
        search.value = "";
        for (const [, s] of selects)
            s.value = "";
        apply();
        search.focus();
    });
    apply();
    return root;
}
