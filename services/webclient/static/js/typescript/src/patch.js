// JSON Patch (RFC 6902): applies add, remove, replace, move, copy and test to a JSON document.
export class PatchError extends Error {
    constructor(message) {
        super(message);
        this.name = "PatchError";
    }
}
/** The document after `patch`, which leaves `document` as it was (it works on a copy). Throws PatchError when an
 * operation cannot apply (a missing path, a failed test): RFC 6902 applies a patch whole or not at all. */
export function applyPatch(document, patch) {
    let root = structuredClone(document);
    for (const operation of patch)
        root = applyOne(root, operation);
    return root;
}
/** A JSON Pointer (RFC 6901) as its reference tokens. */
export function parsePointer(pointer) {
    if (pointer === "")
        return [];
    if (!pointer.startsWith("/"))
        throw new PatchError(`a JSON Pointer starts with "/": ${JSON.stringify(pointer)}`);
    return pointer.slice(1).split("/").map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}
function applyOne(root, operation) {
    switch (operation.op) {
        case "add":
            return add(root, operation.path, structuredClone(operation.value));
        case "remove":
            return remove(root, operation.path).root;
        case "replace": {
            get(root, operation.path); // must exist
            return add(remove(root, operation.path).root, operation.path, structuredClone(operation.value));
        }
        case "move": {
            if (operation.path !== operation.from && operation.path.startsWith(`${operation.from}/`)) {
                throw new PatchError(`cannot move ${operation.from} into itself`);
            }
            const taken = remove(root, operation.from);
            return add(taken.root, operation.path, taken.value);
        }
        case "copy":
            return add(root, operation.path, structuredClone(get(root, operation.from)));
        case "test":
            if (!equal(get(root, operation.path), operation.value)) {
                throw new PatchError(`test failed at ${operation.path}`);
            }
            return root;
        default:
            throw new PatchError(`unknown operation ${JSON.stringify(operation.op)}`);
    }
}
function get(root, pointer) {
    let node = root;
    for (const token of parsePointer(pointer)) {
        node = child(node, token, pointer);
    }
    return node;
}
function child(node, token, pointer) {
    if (Array.isArray(node)) {
        const index = arrayIndex(token, node.length - 1, pointer);
        return node[index];
    }
    if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token))
        return node[token];
    throw new PatchError(`no value at ${pointer}`);
}
function parentOf(root, pointer) {
    const tokens = parsePointer(pointer);
    const key = tokens.pop();
    let node = root;
    for (const token of tokens)
        node = child(node, token, pointer);
    if (!Array.isArray(node) && !isObject(node))
        throw new PatchError(`no container at ${pointer}`);
    return { parent: node, key };
}
function add(root, pointer, value) {
    if (pointer === "")
        return value;
    const { parent, key } = parentOf(root, pointer);
    if (Array.isArray(parent)) {
        const index = key === "-" ? parent.length : arrayIndex(key, parent.length, pointer);
        parent.splice(index, 0, value);
    }
    else {
        parent[key] = value;
    }
    return root;
}
function remove(root, pointer) {
    if (pointer === "")
        return { root: null, value: root };
    const { parent, key } = parentOf(root, pointer);
    if (Array.isArray(parent)) {
        const index = arrayIndex(key, parent.length - 1, pointer);
        return { root, value: parent.splice(index, 1)[0] };
    }
    if (!Object.prototype.hasOwnProperty.call(parent, key))
        throw new PatchError(`no value at ${pointer}`);
    const value = parent[key];
    delete parent[key];
    return { root, value };
}
function arrayIndex(token, max, pointer) {
    if (!/^(0|[1-9][0-9]*)$/.test(token))
        throw new PatchError(`not an array index in ${pointer}`);
    const index = Number(token);
    if (index > max)
        throw new PatchError(`index out of bounds in ${pointer}`);
    return index;
}
function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
function equal(a, b) {
    if (a === b)
        return true;
    if (Array.isArray(a) && Array.isArray(b))
        return a.length === b.length && a.every((x, i) => equal(x, b[i]));
    if (isObject(a) && isObject(b)) {
        const keys = Object.keys(a);
        return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
    }
    return false;
}
