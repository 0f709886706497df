// follow(): a WebSocket kept open on a game's views, reconnecting with backoff and catching up from the last
// version seen (?from=V: the history entries missed, then the current view), skipping nothing.

import { SoukError } from "./errors.js";
import { applyPatch, type PatchOperation } from "./patch.js";
import type { AnyTableView, CommandAnswer, CommandFrame, GameName, HistoryPage } from "./wire.js";

export type FollowStatus = "connecting" | "open" | "down" | "closed";

export interface FollowHandlers<G extends GameName = GameName> {
  /** Every view pushed, in order, newer or the same version with another presence (a seat came or left). */
  onView?(view: AnyTableView<G>): void;
  /** The history entries missed while disconnected (each entry once), before the view that follows them. */
  onHistory?(page: HistoryPage<G>): void;
  /** "connecting" at first, "open" once connected, "down" while the connection is lost (it reconnects),
   * "closed" after close() or a refusal (`detail`: the error's code). */
  onStatus?(status: FollowStatus, detail?: string): void;
  /** A refusal that ends the follow (4401 bad token, 4404 no game: SoukError with status = close code - 4000). */
  onError?(error: SoukError): void;
}

export interface Follow {
  close(): void;
  readonly status: FollowStatus;
  /** The newest view's version received (-1: none yet). */
  readonly version: number;
}

export interface FollowOptions {
  /** Ask for JSON Patch frames after the first full view (`?patch=1`; the server may not: then full views). */
  patches?: boolean;
  /** The newest version the caller already has: the socket starts with what happened after it (?from=). */
  from?: number;
  /** A seat's follow only: its handle's `send` goes over this socket while it is open (a `souk.Command` frame,
   * answered on the socket with what the POST would answer), over HTTP otherwise. Default false. */
  commands?: boolean;
}

/** The WebSocket constructor this library needs (the browser's, Node 22's, or the `ws` package's). */
export type WebSocketLike = new (url: string) => {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
  /** Needed only to send commands on the socket (FollowOptions.commands). */
  send?(data: string): void;
  readonly readyState: number;
};

export interface FollowerConfig {
  /** The socket's http(s) or ws(s) URL, its token in the query for a seat, without from/since/patch. */
  url: string;
  WebSocket?: WebSocketLike;
  /** Milliseconds before the first reconnection, doubling up to maxDelayMs (default 100 and 5000). */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Milliseconds a connection may take to open before it is given up and tried again (default 5000). */
  openTimeoutMs?: number;
  /** Called with every view's version (a seat's handle keeps the newest for expected_version). */
  saw?(version: number): void;
}

/** A patch frame: the JSON Patch from the view of version `from` (the previous frame this socket received) to
 * the view of `version` (services/gateway/fanout.py). */
interface PatchFrame {
  patch: PatchOperation[];
  from: number;
  version: number;
}

const REFUSED_FOR_GOOD = (code: number) => code >= 4400 && code < 4500 && code !== 4429 && code !== 4408;

export function resolveWebSocket(given?: WebSocketLike): WebSocketLike {
  const found = given ?? (globalThis as { WebSocket?: WebSocketLike }).WebSocket;
  if (found === undefined) {
    throw new SoukError(0, "no_websocket", "no WebSocket here: pass a constructor as the client's `WebSocket` " +
      "option (Node 20: run with --experimental-websocket, or use the `ws` package)");
  }
  return found;
}

/** http(s) URLs become ws(s); a relative URL is resolved against the page's location. */
export function socketUrl(url: string): string {
  const location = (globalThis as { location?: { href: string } }).location;
  const absolute = new URL(url, location?.href);
  if (absolute.protocol === "http:") absolute.protocol = "ws:";
  else if (absolute.protocol === "https:") absolute.protocol = "wss:";
  return absolute.toString();
}

export class Follower<G extends GameName = GameName> implements Follow {
  private state: FollowStatus = "connecting";
  private last: AnyTableView<G> | null = null;
  private lastText = "";
  private newest = -1; // the newest view's version received
  private lastEntry = -1; // the newest history entry handed to onHistory
  private socket: InstanceType<WebSocketLike> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private opening: ReturnType<typeof setTimeout> | null = null; // gives up a connection that does not open
  private delay: number;
  private readonly Socket: WebSocketLike;
  // commands sent on the socket, waiting for their answer, by command id (null: the socket was lost first)
  private readonly waiting = new Map<string, (answer: CommandAnswer | null) => void>();

  constructor(
    private readonly config: FollowerConfig,
    private readonly handlers: FollowHandlers<G>,
    private readonly options: FollowOptions = {},
  ) {
    this.Socket = resolveWebSocket(config.WebSocket);
    this.delay = config.firstDelayMs ?? 100;
    if (options.from !== undefined) this.newest = this.lastEntry = options.from;
    this.setStatus("connecting");
    this.connect();
  }

  get status(): FollowStatus {
    return this.state;
  }

  get version(): number {
    return this.newest;
  }

  /** Sends a command frame on the open socket; its answer, or null when the socket is not open, is lost before the
   * answer, or none comes within `timeoutMs` (then send it over HTTP, with the same command id). */
  command(frame: CommandFrame<G>, timeoutMs: number): Promise<CommandAnswer | null> {
    const socket = this.socket;
    if (socket === null || socket.readyState !== 1 || socket.send === undefined || this.state !== "open") {
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(null), timeoutMs);
      const done = (answer: CommandAnswer | null) => {
        clearTimeout(timer);
        if (this.waiting.get(frame.command_id) === done) this.waiting.delete(frame.command_id);
        resolve(answer);
      };
      this.waiting.get(frame.command_id)?.(null); // the same id sent again: the newer send waits for the answer
      this.waiting.set(frame.command_id, done);
      try {
        socket.send!(JSON.stringify(frame));
      } catch {
        done(null);
      }
    });
  }

  /** Whether a command would go on the socket now. */
  get canSend(): boolean {
    return this.socket !== null && this.socket.readyState === 1 && this.state === "open";
  }

  private dropWaiting(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of waiting) done(null);
  }

  close(): void {
    if (this.state === "closed") return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    this.opened();
    socket?.close(1000, "bye");
    this.setStatus("closed");
  }

  private opened(): void {
    if (this.opening !== null) clearTimeout(this.opening);
    this.opening = null;
  }

  private setStatus(status: FollowStatus, detail?: string): void {
    if (status !== "open") this.dropWaiting();
    this.state = status;
    this.handlers.onStatus?.(status, detail);
  }

  private connect(): void {
    const url = new URL(socketUrl(this.config.url));
    if (this.newest >= 0) url.searchParams.set("from", String(this.newest));
    if (this.options.patches) url.searchParams.set("patch", "1");
    let socket: InstanceType<WebSocketLike>;
    try {
      socket = new this.Socket(url.toString());
    } catch (error) {
      this.lost(`${error}`);
      return;
    }
    this.socket = socket;
    // a connection that neither opens nor fails (a server going away mid-handshake) is given up
    const openTimeout = this.config.openTimeoutMs ?? 5000;
    this.opened();
    this.opening = setTimeout(() => {
      this.opening = null;
      if (this.socket !== socket) return;
      this.socket = null;
      socket.close();
      this.lost(`not open after ${openTimeout} ms`);
    }, openTimeout);
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.opened();
      this.delay = this.config.firstDelayMs ?? 100;
      this.setStatus("open");
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      this.receive(typeof event.data === "string" ? event.data : String(event.data));
    };
    socket.onerror = () => {}; // onclose follows, with the code
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.opened();
      this.socket = null;
      if (REFUSED_FOR_GOOD(event.code)) {
        const error = new SoukError(event.code - 4000, event.reason || "refused",
          `the WebSocket was closed with ${event.code}`);
        this.setStatus("closed", error.code);
        this.handlers.onError?.(error);
        return;
      }
      this.lost(`closed with ${event.code}${event.reason ? ` ${event.reason}` : ""}`);
    };
  }

  /** The connection is lost (or never made): "down", and connect again after the backoff. */
  private lost(detail: string): void {
    this.dropWaiting();
    if (this.state === "closed") return;
    this.setStatus("down", detail);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.state !== "closed") this.connect();
    }, this.delay);
    this.delay = Math.min(this.delay * 2, this.config.maxDelayMs ?? 5000);
  }

  /** Drops this socket and connects again now: a full view comes first (a patch that cannot apply). */
  private resync(why: string): void {
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, "resync");
    this.setStatus("connecting", why);
    this.connect();
  }

  private receive(text: string): void {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.resync("a frame that is not JSON");
      return;
    }
    if (frame.type === "souk.CommandAnswer") { // the answer to a command sent on this socket
      const answer = frame as unknown as CommandAnswer;
      this.waiting.get(answer.command_id)?.(answer);
      return;
    }
    if ("next_after" in frame) {
      const page = frame as unknown as HistoryPage<G>;
      const entries = page.entries.filter((entry) => entry.seq > this.lastEntry);
      if (entries.length > 0) {
        this.lastEntry = entries[entries.length - 1].seq;
        this.handlers.onHistory?.({ ...page, entries });
      }
      return;
    }
    if ("patch" in frame) {
      const patch = frame as unknown as PatchFrame;
      if (this.last === null || this.last.version !== patch.from) {
        this.resync(`a patch from version ${patch.from}, not the view held`);
        return;
      }
      let view: AnyTableView<G>;
      try {
        view = applyPatch(this.last, patch.patch);
      } catch (error) {
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
    const view = frame as unknown as AnyTableView<G>;
    if (typeof view.version !== "number") return;
    if (view.version < this.newest || (view.version === this.newest && text === this.lastText)) {
      this.last = this.last ?? view;
      return; // a view already handed over (a reconnection's first view is often the one held)
    }
    this.lastText = text;
    this.deliver(view);
  }

  private deliver(view: AnyTableView<G>): void {
    this.last = view;
    this.newest = Math.max(this.newest, view.version);
    this.lastEntry = Math.max(this.lastEntry, view.version);
    this.config.saw?.(view.version);
    this.handlers.onView?.(view);
  }
}
