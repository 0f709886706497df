export class SoukError extends Error {
    status;
    code;
    retryAfter;
    constructor(status, code, message, retryAfter = null) {
        super(message);
        this.status = status;
        this.code = code;
        this.retryAfter = retryAfter;
        this.name = "SoukError";
    }
    get retryable() {
        return this.status === 0 || this.status >= 500 || this.code === "rate_limited"
            || this.code === "not_projected" || this.code === "view_not_ready";
    }
}
/** The server's clock minus the browser's, in seconds, estimated from the answers' Date headers (1 s steps) and
 * raised by any server instant known to be past (a fresh view's clock `at`). */
export const serverClock = {
    offset: 0,
    known: false,
    now() {
        return Date.now() / 1000 + this.offset;
    },
    fromDate(header, sentAt, receivedAt) {
        if (!header)
            return;
        const date = Date.parse(header);
        if (Number.isNaN(date))
            return;
        // the Date header is truncated to the second: the server's instant lies in [date, date + 1 s)
        const estimate = (date + 500) / 1000 - (sentAt + receivedAt) / 2000;
        if (!this.known || Math.abs(estimate - this.offset) > 1)
            this.offset = estimate;
        this.known = true;
    },
    /** `instant` (server seconds) has passed on the server: the server's now is at least that. */
    passed(instant) {
        const offset = instant - Date.now() / 1000;
        if (offset > this.offset)
            this.offset = offset;
    },
};
function randomHex(bytes) {
    const data = new Uint8Array(bytes);
    crypto.getRandomValues(data);
    return Array.from(data, (b) => b.toString(16).padStart(2, "0")).join("");
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export class SoukClient {
    baseUrl;
    retries;
    constructor(options = {}) {
        this.baseUrl = options.baseUrl ?? "";
        this.retries = options.retries ?? 5;
    }
    /** One request, resent while a resend may cure the failure (every call here is safe to resend). */
    async call(path, options = {}) {
        const query = Object.entries(options.query ?? {}).filter(([, v]) => v !== undefined && v !== null);
        const url = this.baseUrl + path + (query.length ? "?" + new URLSearchParams(query.map(([k, v]) => [k, String(v)])).toString() : "");
        const headers = {};
        if (options.token)
            headers.Authorization = `Bearer ${options.token}`;
        let body;
        if (options.raw !== undefined) {
            body = options.raw;
            headers["Content-Type"] = "application/json";
        }
        else if (options.body !== undefined) {
            body = JSON.stringify(options.body);
            headers["Content-Type"] = "application/json";
        }
        let delay = 100;
        for (let attempt = 0;; attempt++) {
            let error;
            const sentAt = Date.now();
            try {
                const response = await fetch(url, { method: options.method ?? "GET", headers, body });
                serverClock.fromDate(response.headers.get("date"), sentAt, Date.now());
                if (response.ok)
                    return response;
                error = await errorOf(response);
            }
            catch (exc) {
                error = new SoukError(0, "unreachable", `the server cannot be reached (${String(exc)})`);
            }
            if (!error.retryable || attempt >= this.retries)
                throw error;
            await sleep(error.retryAfter !== null ? error.retryAfter * 1000 : delay);
            delay = Math.min(delay * 2, 2000);
        }
    }
    async json(path, options = {}) {
        return (await (await this.call(path, options)).json());
    }
    catalog() {
        return this.json("/catalog");
    }
    async lobby(filter = {}) {
        const response = await this.call("/games", { query: { ...filter, cursor: filter.cursor ?? undefined } });
        return { entries: (await response.json()), next: response.headers.get("x-next-cursor") };
    }
    game(gameId) {
        return this.json(`/games/${enc(gameId)}`);
    }
    create(body, opts = {}) {
        return this.json("/games", { method: "POST", body: { ...body, request_id: opts.requestId ?? randomHex(16) } });
    }
    async join(gameId, body, opts = {}) {
        const joined = await this.json(`/games/${enc(gameId)}/seats`, {
            method: "POST", body: { ...body, request_id: opts.requestId ?? randomHex(16), entropy: randomHex(32) },
        });
        return new Seat(this, gameId, joined.seat, joined.token);
    }
    seat(gameId, seat, token) {
        return new Seat(this, gameId, seat, token);
    }
    fillBots(gameId, body = {}) {
        return this.json(`/games/${enc(gameId)}/bots`, { method: "POST", body });
    }
    view(gameId, opts = {}) {
        return this.json(`/games/${enc(gameId)}/view`, { query: { at: opts.at } });
    }
    history(gameId, opts = {}) {
        return this.json(`/games/${enc(gameId)}/history`, { query: opts });
    }
    /** A finished game's record as served, byte for byte (what `verifyText` checks). */
    async recordText(gameId) {
        return (await this.call(`/games/${enc(gameId)}/record`)).text();
    }
    verifyText(record) {
        return this.json("/verify", { method: "POST", raw: record });
    }
    follow(gameId, handlers) {
        return new Socket(this.socketUrl(`/games/${enc(gameId)}/ws`), {}, handlers);
    }
    socketUrl(path) {
        const base = this.baseUrl || location.origin;
        return base.replace(/^http/, "ws") + path;
    }
}
export class Seat {
    client;
    gameId;
    seat;
    token;
    /** The newest version this handle saw (sent as `expected_version`). */
    version = 0;
    constructor(client, gameId, seat, token) {
        this.client = client;
        this.gameId = gameId;
        this.seat = seat;
        this.token = token;
    }
    get path() {
        return `/games/${enc(this.gameId)}/seats/${this.seat}`;
    }
    saw(version) {
        this.version = Math.max(this.version, version);
    }
    async view(opts = {}) {
        const view = (await (await this.client.call(`${this.path}/view`, { token: this.token, query: { at: opts.at } }))
            .json());
        if (opts.at === undefined)
            this.saw(view.version);
        return view;
    }
    async history(opts = {}) {
        return (await (await this.client.call(`${this.path}/history`, { token: this.token, query: opts }))
            .json());
    }
    send(command, opts = {}) {
        return this.post("commands", { command }, opts);
    }
    undo(toVersion, opts = {}) {
        return this.post("undo", { to_version: toVersion }, opts);
    }
    acceptUndo(opts = {}) {
        return this.post("undo/accept", {}, opts);
    }
    declineUndo(opts = {}) {
        return this.post("undo/decline", {}, opts);
    }
    resign(opts = {}) {
        return this.post("resign", {}, { expectedVersion: null, ...opts });
    }
    /** A command of this seat, with its id (made once, reused by every resend) and the version it was decided on. */
    async post(route, body, opts) {
        const expected = opts.expectedVersion === undefined ? (this.version || null) : opts.expectedVersion;
        const payload = { command_id: opts.commandId ?? randomHex(16), ...body };
        if (expected !== null)
            payload.expected_version = expected;
        const response = await this.client.call(`${this.path}/${route}`, { method: "POST", token: this.token,
            body: payload });
        return (await response.json());
    }
    follow(handlers) {
        return new Socket(this.client.socketUrl(`${this.path}/ws`), { token: this.token }, handlers, this);
    }
}
/** A WebSocket that reconnects (backoff from 250 ms doubling to 2 s) with `?from=` the newest version received:
 * the server then sends the history missed (onHistory), then its view. A close with 44xx is a refusal: closed. */
class Socket {
    url;
    params;
    handlers;
    seat;
    status = "connecting";
    version = -1;
    ws = null;
    stopped = false;
    delay = 250;
    timer = null;
    constructor(url, params, handlers, seat) {
        this.url = url;
        this.params = params;
        this.handlers = handlers;
        this.seat = seat;
        this.open();
    }
    setStatus(status, detail) {
        this.status = status;
        this.handlers.onStatus?.(status, detail);
    }
    open() {
        const query = new URLSearchParams(this.params);
        if (this.version >= 0)
            query.set("from", String(this.version));
        const qs = query.toString();
        const ws = new WebSocket(this.url + (qs ? `?${qs}` : ""));
        this.ws = ws;
        ws.onopen = () => {
            this.delay = 250;
            this.setStatus("open");
        };
        ws.onmessage = (frame) => {
            const data = JSON.parse(String(frame.data));
            if ("entries" in data) {
                this.handlers.onHistory?.(data);
                return;
            }
            if (data.version < this.version)
                return; // the same version again is a presence push: shown
            this.version = data.version;
            this.seat?.saw(data.version);
            this.handlers.onView?.(data);
        };
        ws.onclose = (event) => {
            if (this.ws !== ws || this.stopped)
                return;
            this.ws = null;
            if (event.code >= 4400 && event.code < 4500) {
                this.stopped = true;
                this.setStatus("closed", event.reason || `refused (${event.code})`);
                return;
            }
            this.setStatus("down", "the connection to the server is lost");
            this.timer = setTimeout(() => {
                this.timer = null;
                if (this.stopped)
                    return;
                this.setStatus("connecting");
                this.open();
            }, this.delay);
            this.delay = Math.min(this.delay * 2, 2000);
        };
    }
    close() {
        this.stopped = true;
        if (this.timer)
            clearTimeout(this.timer);
        const ws = this.ws;
        this.ws = null;
        if (ws) {
            ws.onopen = ws.onmessage = ws.onclose = null;
            // closing a socket still connecting logs a console error in Chromium: close it once it opens
            if (ws.readyState === WebSocket.CONNECTING)
                ws.onopen = () => ws.close();
            else
                ws.close();
        }
        this.setStatus("closed");
    }
}
async function errorOf(response) {
    let code = "http_error";
    let message = `HTTP ${response.status}`;
    try {
        const body = (await response.json());
        if (typeof body.code === "string")
            code = body.code;
        if (typeof body.message === "string")
            message = body.message;
    }
    catch {
        // not JSON: keep the status
    }
    const retry = Number.parseFloat(response.headers.get("retry-after") ?? "");
    return new SoukError(response.status, code, message, Number.isFinite(retry) ? retry : null);
}
function enc(part) {
    return encodeURIComponent(part);
}
