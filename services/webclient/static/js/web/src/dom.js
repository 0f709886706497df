// A few helpers to build the page with the DOM's own calls (text goes in as text: a player's name `<script>` is
// shown as typed, never parsed as HTML).
/** `h("button", {type: "button", onclick: f, "data-legal": 3}, "Take")`: attributes (false/null/undefined left
 * out, true as ""), `on*` functions as listeners, children as nodes or text. */
export function h(tag, attrs = {}, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
        if (value === false || value === null || value === undefined)
            continue;
        if (typeof value === "function") {
            element.addEventListener(name.slice(2), value);
        }
        else if (name === "value" && "value" in element) {
            element.value = String(value);
        }
        else if (name === "checked" && element instanceof HTMLInputElement) {
            element.checked = Boolean(value);
        }
        else {
            element.setAttribute(name, value === true ? "" : String(value));
        }
    }
    append(element, children);
    return element;
}
export function append(parent, children) {
    for (const child of children) {
        if (child === null || child === undefined || child === false)
            continue;
        if (Array.isArray(child))
            append(parent, child);
        else
            parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
}
/** Replaces `parent`'s children, keeping the keyboard focus on the "same" control when it is there again (same
 * id, or same data-legal / data-join-seat / data-key), so a push does not throw a keyboard user back to the top. */
export function replace(parent, ...children) {
    const active = document.activeElement;
    const key = active instanceof HTMLElement && parent.contains(active) ? focusKey(active) : null;
    parent.replaceChildren();
    append(parent, children);
    if (key) {
        const again = parent.querySelector(key);
        again?.focus();
    }
}
function focusKey(element) {
    if (element.id)
        return `#${CSS.escape(element.id)}`;
    for (const name of ["data-legal", "data-join-seat", "data-key"]) {
        const value = element.getAttribute(name);
        if (value !== null)
            return `[${name}="${CSS.escape(value)}"]`;
    }
    return null;
}
export function formatSeconds(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    const m = Math.floor(s / 60);
    return `${m}:${String(s % 60).padStart(2, "0")}`;
}
