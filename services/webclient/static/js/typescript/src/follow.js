// follow(): a WebSocket kept open on a game's views, reconnecting with backoff and catching up from the last
// version seen (?from=V: the history entries missed, then the current view), skipping nothing.
import { SoukError } from "./errors.js";
import { applyPatch } from "./patch.js";
const REFUSED_FOR_GOOD = (code) => code >= 4400 && code < 4500 && code !== 4429 && code !== 4408;
export function resolveWebSocket(given) {
    const found = given ?? globalThis.WebSocket;
    if (found === undefined) {
        throw new SoukError(0, "no_websocket", "no WebSocket here: pass a constructor as the client's `WebSocket` " +
            "option (Node 20: run with --experimental-websocket, or use the `ws` package)");
    }
    return found;
}
/** http(s) URLs become ws(s); a relative URL is resolved against the page's location. */
export function socketUrl(url) {
    const location = globalThis.location;
    const absolute = new URL(url, location?.href);
    if (absolute.protocol === "http:")
        absolute.protocol = "ws:";
    else if (absolute.protocol === "https:")
        absolute.protocol = "wss:";
    return absolute.toString();
}
export class Follower {
    config;
    handlers;
    options;
    state = "connecting";
    last = null;
    lastText = "";
    newest = -1; // the newest view's version received
    lastEntry = -1; // the newest history entry handed to onHistory
    socket = null;
    timer = null;
    opening = null; // gives up a connection that does not open
    delay;
    Socket;
    // commands sent on the socket, waiting for their answer, by command id (null: the socket was lost first)
    waiting = new Map();
    constructor(config, handlers, options = {}) {
        this.config = config;
        this.handlers = handlers;
        this.options = options;
        this.Socket = resolveWebSocket(config.WebSocket);
        this.delay = config.firstDelayMs ?? 100;
        if (options.from !== undefined)
            this.newest = this.lastEntry = options.from;
        this.setStatus("connecting");
        this.connect();
    }
    get status() {
        return this.state;
    }
    get version() {
        return this.newest;
    }
    /** Sends a command frame on the open socket; its answer, or null when the socket is not open, is lost before the
     * answer, or none comes within `timeoutMs` (then send it over HTTP, with the same command id). */
    command(frame, timeoutMs) {
        const socket = this.socket;
        if (socket === null || socket.readyState !== 1 || socket.send === undefined || this.state !== "open") {
            return Promise.resolve(null);
        }
        return new Promise((resolve) => {
            const timer = setTimeout(() => done(null), timeoutMs);
            const done = (answer) => {
                clearTimeout(timer);
                if (this.waiting.get(frame.command_id) === done)
                    this.waiting.delete(frame.command_id);
                resolve(answer);
            };
            this.waiting.get(frame.command_id)?.(null); // the same id sent again: the newer send waits for the answer
            this.waiting.set(frame.command_id, done);
            try {
                socket.send(JSON.stringify(frame));
            }
            catch {
                done(null);
            }
        });
    }
    /** Whether a command would go on the socket now. */
    get canSend() {
        return this.socket !== null && this.socket.readyState === 1 && this.state === "open";
    }
    dropWaiting() {
        const waiting = [...this.waiting.values()];
        this.waiting.clear();
        for (const done of waiting)
            done(null);
    }
    close() {
        if (this.state === "closed")
            return;
        if (this.timer !== null)
            clearTimeout(this.timer);
        this.timer = null;
        const socket = this.socket;
        this.socket = null;
        this.opened();
        socket?.close(1000, "bye");
        this.setStatus("closed");
    }
    opened() {
        if (this.opening !== null)
            clearTimeout(this.opening);
        this.opening = null;
    }
    setStatus(status, detail) {
        if (status !== "open")
            this.dropWaiting();
        this.state = status;
        this.handlers.onStatus?.(status, detail);
    }
    connect() {
        const url = new URL(socketUrl(this.config.url));
        if (this.newest >= 0)
            url.searchParams.set("from", String(this.newest));
        if (this.options.patches)
            url.searchParams.set("patch", "1");
        let socket;
        try {
            socket = new this.Socket(url.toString());
        }
        catch (error) {
            this.lost(`${error}`);
            return;
        }
        this.socket = socket;
        // a connection that neither opens nor fails (a server going away mid-handshake) is given up
        const openTimeout = this.config.openTimeoutMs ?? 5000;
        this.opened();
        this.opening = setTimeout(() => {
            this.opening = null;
            if (this.socket !== socket)
                return;
            this.socket = null;
            socket.close();
            this.lost(`not open after ${openTimeout} ms`);
        }, openTimeout);
        socket.onopen = () => {
            if (this.socket !== socket)
                return;
            this.opened();
            this.delay = this.config.firstDelayMs ?? 100;
            this.setStatus("open");
        };
        socket.onmessage = (event) => {
            if (this.socket !== socket)
                return;
            this.receive(typeof event.data === "string" ? event.data : String(event.data));
        };
        socket.onerror = () => { }; // onclose follows, with the code
        socket.onclose = (event) => {
            if (this.socket !== socket)
                return;
            this.opened();
            this.socket = null;
            if (REFUSED_FOR_GOOD(event.code)) {
                const error = new SoukError(event.code - 4000, event.reason || "refused", `the WebSocket was closed with ${event.code}`);
                this.setStatus("closed", error.code);
                this.handlers.onError?.(error);
                return;
            }
            this.lost(`closed with ${event.code}${event.reason ? ` ${event.reason}` : ""}`);
        };
    }
    /** The connection is lost (or never made): "down", and connect again after the backoff. */
    lost(detail) {
        this.dropWaiting();
        if (this.state === "closed")
            return;
        this.setStatus("down", detail);
        this.timer = setTimeout(() => {
            this.timer = null;
            if (this.state !== "closed")
                this.connect();
        }, this.delay);
        this.delay = Math.min(this.delay * 2, this.config.maxDelayMs ?? 5000);
    }
    /** Drops this socket and connects again now: a full view comes first (a patch that cannot apply). */
    resync(why) {
        const socket = this.socket;
        this.socket = null;
        socket?.close(1000, "resync");
        this.setStatus("connecting", why);
        this.connect();
    }
    receive(text) {
        let frame;
        try {
            frame = JSON.parse(text);
        }
        catch {
            this.resync("a frame that is not JSON");
            return;
        }
        if (frame.type === "souk.CommandAnswer") { // the answer to a command sent on this socket
            const answer = frame;
            this.waiting.get(answer.command_id)?.(answer);
            return;
        }
        if ("next_after" in frame) {
            const page = frame;
            const entries = page.entries.filter((entry) => entry.seq > this.lastEntry);
            if (entries.length > 0) {
                this.lastEntry = entries[entries.length - 1].seq;
                this.handlers.onHistory?.({ ...page, entries });
            }
            return;
        }
        if ("patch" in frame) {
            const patch = frame;
            if (this.last === null || this.last.version !== patch.from) {
                this.resync(`a patch from version ${patch.from}, not the view held`);
                return;
            }
            let view;
            try {
                view = applyPatch(this.last, patch.patch);
            }
            catch (error) {
                this.resync(`a patch that does not apply: ${error}`);
                return;
            }
            if (view.version !== patch.version) {
                this.resync(`a patch to version ${patch.version} gave version ${view.version}`);
                return;
            }
            this.lastText = "";
            this.deliver(view);
            return;
        }
        const view = frame;
        if (typeof view.version !== "number")
            return;
        if (view.version < this.newest || (view.version === this.newest && text === this.lastText)) {
            this.last = this.last ?? view;
            return; // a view already handed over (a reconnection's first view is often the one held)
        }
        this.lastText = text;
        this.deliver(view);
    }
    deliver(view) {
        this.last = view;
        this.newest = Math.max(this.newest, view.version);
        this.lastEntry = Math.max(this.lastEntry, view.version);
        this.config.saw?.(view.version);
        this.handlers.onView?.(view);
    }
}
