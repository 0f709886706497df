// The web client's access to the server, shaped as the library's API in the issue #20 contract (SoukClient, Seat,
// SoukError, follow with FollowHandlers). The library itself (clients/typescript, branch `tslib`) is being written
// at the same time: this module holds the part the page needs until it lands, and the page imports only from here,
// so switching to the library is this file becoming `export { SoukClient, Seat, SoukError } from "souk-client"`.
//
// Two things the library's contract does not give the page, kept here whatever happens to the rest:
// - `recordText` / `verifyText`: a record is verified byte for byte as served (README, Records), so the page keeps
//   the text it downloaded and posts that same text; parsing and serialising it again could change its bytes.
// - `serverClock`: the offset between the server's clock and the browser's, read from each answer's Date header.
import type {
  Created, GameInfo, HistoryPage, LobbyEntry, RecordVerdict, Reply, TableView,
} from "souk-client";

export type FollowStatus = "connecting" | "open" | "down" | "closed";

export interface FollowHandlers {
  onView?(view: TableView): void;
  onHistory?(page: HistoryPage): void;
  onStatus?(status: FollowStatus, detail?: string): void;
}

export interface Follow {
  close(): void;
  readonly status: FollowStatus;
  readonly version: number;
}

export class SoukError extends Error {
  constructor(readonly status: number, readonly code: string, message: string,
              readonly retryAfter: number | null = null) {
    super(message);
    this.name = "SoukError";
  }

  get retryable(): boolean {
    return this.status === 0 || this.status >= 500 || this.code === "rate_limited"
      || this.code === "not_projected" || this.code === "view_not_ready";
  }
}

/** The server's clock minus the browser's, in seconds, estimated from the answers' Date headers (1 s steps) and
 * raised by any server instant known to be past (a fresh view's clock `at`). */
export const serverClock = {
  offset: 0,
  known: false,
  now(): number {
    return Date.now() / 1000 + this.offset;
  },
  fromDate(header: string | null, sentAt: number, receivedAt: number): void {
    if (!header) return;
    const date = Date.parse(header);
    if (Number.isNaN(date)) return;
    // the Date header is truncated to the second: the server's instant lies in [date, date + 1 s)
    const estimate = (date + 500) / 1000 - (sentAt + receivedAt) / 2000;
    if (!this.known || Math.abs(estimate - this.offset) > 1) this.offset = estimate;
    this.known = true;
  },
  /** `instant` (server seconds) has passed on the server: the server's now is at least that. */
  passed(instant: number): void {
    const offset = instant - Date.now() / 1000;
    if (offset > this.offset) this.offset = offset;
  },
};

function randomHex(bytes: number): string {
  const data = new Uint8Array(bytes);
  crypto.getRandomValues(data);
  return Array.from(data, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface CallOptions {
  method?: string;
  body?: unknown;
  raw?: string;
  token?: string;
  query?: Record<string, string | number | undefined | null>;
}

export class SoukClient {
  readonly baseUrl: string;
  readonly retries: number;

  constructor(options: { baseUrl?: string; retries?: number } = {}) {
    this.baseUrl = options.baseUrl ?? "";
    this.retries = options.retries ?? 5;
  }

  /** One request, resent while a resend may cure the failure (every call here is safe to resend). */
  async call(path: string, options: CallOptions = {}): Promise<Response> {
    const query = Object.entries(options.query ?? {}).filter(([, v]) => v !== undefined && v !== null);
    const url = this.baseUrl + path + (query.length ? "?" + new URLSearchParams(
      query.map(([k, v]) => [k, String(v)])).toString() : "");
    const headers: Record<string, string> = {};
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers["Content-Type"] = "application/json";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["Content-Type"] = "application/json";
    }
    let delay = 100;
    for (let attempt = 0; ; attempt++) {
      let error: SoukError;
      const sentAt = Date.now();
      try {
        const response = await fetch(url, { method: options.method ?? "GET", headers, body });
        serverClock.fromDate(response.headers.get("date"), sentAt, Date.now());
        if (response.ok) return response;
        error = await errorOf(response);
      } catch (exc) {
        error = new SoukError(0, "unreachable", `the server cannot be reached (${String(exc)})`);
      }
      if (!error.retryable || attempt >= this.retries) throw error;
      await sleep(error.retryAfter !== null ? error.retryAfter * 1000 : delay);
      delay = Math.min(delay * 2, 2000);
    }
  }

  private async json<T>(path: string, options: CallOptions = {}): Promise<T> {
    return (await (await this.call(path, options)).json()) as T;
  }

  catalog(): Promise<GameInfo[]> {
    return this.json("/catalog");
  }

  async lobby(filter: { game?: string; status?: string; limit?: number; cursor?: string | null } = {}):
      Promise<{ entries: LobbyEntry[]; next: string | null }> {
    const response = await this.call("/games", { query: { ...filter, cursor: filter.cursor ?? undefined } });
    return { entries: (await response.json()) as LobbyEntry[], next: response.headers.get("x-next-cursor") };
  }

  game(gameId: string): Promise<LobbyEntry> {
    return this.json(`/games/${enc(gameId)}`);
  }

  create(body: { game: string; title: string; seats: number; options?: Record<string, unknown>;
                 private?: boolean }, opts: { requestId?: string } = {}): Promise<Created> {
    return this.json("/games", { method: "POST", body: { ...body, request_id: opts.requestId ?? randomHex(16) } });
  }

  async join(gameId: string, body: { name: string; seat?: number; invite?: string },
             opts: { requestId?: string } = {}): Promise<Seat> {
    const joined = await this.json<{ seat: number; token: string }>(`/games/${enc(gameId)}/seats`, {
      method: "POST", body: { ...body, request_id: opts.requestId ?? randomHex(16), entropy: randomHex(32) },
    });
    return new Seat(this, gameId, joined.seat, joined.token);
  }

  seat(gameId: string, seat: number, token: string): Seat {
    return new Seat(this, gameId, seat, token);
  }

  fillBots(gameId: string, body: { seats?: number[]; strategy?: string } = {}): Promise<unknown> {
    return this.json(`/games/${enc(gameId)}/bots`, { method: "POST", body });
  }

  view(gameId: string, opts: { at?: number } = {}): Promise<TableView> {
    return this.json(`/games/${enc(gameId)}/view`, { query: { at: opts.at } });
  }

  history(gameId: string, opts: { after?: number; limit?: number } = {}): Promise<HistoryPage> {
    return this.json(`/games/${enc(gameId)}/history`, { query: opts });
  }

  /** A finished game's record as served, byte for byte (what `verifyText` checks). */
  async recordText(gameId: string): Promise<string> {
    return (await this.call(`/games/${enc(gameId)}/record`)).text();
  }

  verifyText(record: string): Promise<RecordVerdict> {
    return this.json("/verify", { method: "POST", raw: record });
  }

  follow(gameId: string, handlers: FollowHandlers): Follow {
    return new Socket(this.socketUrl(`/games/${enc(gameId)}/ws`), {}, handlers);
  }

  socketUrl(path: string): string {
    const base = this.baseUrl || location.origin;
    return base.replace(/^http/, "ws") + path;
  }
}

export class Seat {
  /** The newest version this handle saw (sent as `expected_version`). */
  version = 0;

  constructor(readonly client: SoukClient, readonly gameId: string, readonly seat: number,
              readonly token: string) {}

  private get path(): string {
    return `/games/${enc(this.gameId)}/seats/${this.seat}`;
  }

  saw(version: number): void {
    this.version = Math.max(this.version, version);
  }

  async view(opts: { at?: number } = {}): Promise<TableView> {
    const view = (await (await this.client.call(`${this.path}/view`, { token: this.token, query: { at: opts.at } }))
      .json()) as TableView;
    if (opts.at === undefined) this.saw(view.version);
    return view;
  }

  async history(opts: { after?: number; limit?: number } = {}): Promise<HistoryPage> {
    return (await (await this.client.call(`${this.path}/history`, { token: this.token, query: opts }))
      .json()) as HistoryPage;
  }

  send(command: unknown, opts: { expectedVersion?: number | null; commandId?: string } = {}): Promise<Reply> {
    return this.post("commands", { command }, opts);
  }

  undo(toVersion: number, opts: { expectedVersion?: number | null; commandId?: string } = {}): Promise<Reply> {
    return this.post("undo", { to_version: toVersion }, opts);
  }

  acceptUndo(opts: { expectedVersion?: number | null; commandId?: string } = {}): Promise<Reply> {
    return this.post("undo/accept", {}, opts);
  }

  declineUndo(opts: { expectedVersion?: number | null; commandId?: string } = {}): Promise<Reply> {
    return this.post("undo/decline", {}, opts);
  }

  resign(opts: { expectedVersion?: number | null; commandId?: string } = {}): Promise<Reply> {
    return this.post("resign", {}, { expectedVersion: null, ...opts });
  }

  /** A command of this seat, with its id (made once, reused by every resend) and the version it was decided on. */
  private async post(route: string, body: Record<string, unknown>,
                     opts: { expectedVersion?: number | null; commandId?: string }): Promise<Reply> {
    const expected = opts.expectedVersion === undefined ? (this.version || null) : opts.expectedVersion;
    const payload: Record<string, unknown> = { command_id: opts.commandId ?? randomHex(16), ...body };
    if (expected !== null) payload.expected_version = expected;
    const response = await this.client.call(`${this.path}/${route}`, { method: "POST", token: this.token,
                                                                        body: payload });
    return (await response.json()) as Reply;
  }

  follow(handlers: FollowHandlers): Follow {
    return new Socket(this.client.socketUrl(`${this.path}/ws`), { token: this.token }, handlers, this);
  }
}

/** A WebSocket that reconnects (backoff from 250 ms doubling to 2 s) with `?from=` the newest version received:
 * the server then sends the history missed (onHistory), then its view. A close with 44xx is a refusal: closed. */
class Socket implements Follow {
  status: FollowStatus = "connecting";
  version = -1;
  private ws: WebSocket | null = null;
  private stopped = false;
  private delay = 250;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly url: string, private readonly params: Record<string, string>,
              private readonly handlers: FollowHandlers, private readonly seat?: Seat) {
    this.open();
  }

  private setStatus(status: FollowStatus, detail?: string): void {
    this.status = status;
    this.handlers.onStatus?.(status, detail);
  }

  private open(): void {
    const query = new URLSearchParams(this.params);
    if (this.version >= 0) query.set("from", String(this.version));
    const qs = query.toString();
    const ws = new WebSocket(this.url + (qs ? `?${qs}` : ""));
    this.ws = ws;
    ws.onopen = () => {
      this.delay = 250;
      this.setStatus("open");
    };
    ws.onmessage = (frame) => {
      const data = JSON.parse(String(frame.data)) as TableView | HistoryPage;
      if ("entries" in data) {
        this.handlers.onHistory?.(data);
        return;
      }
      if (data.version < this.version) return;  // the same version again is a presence push: shown
      this.version = data.version;
      this.seat?.saw(data.version);
      this.handlers.onView?.(data);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws || this.stopped) return;
      this.ws = null;
      if (event.code >= 4400 && event.code < 4500) {
        this.stopped = true;
        this.setStatus("closed", event.reason || `refused (${event.code})`);
        return;
      }
      this.setStatus("down", "the connection to the server is lost");
      this.timer = setTimeout(() => {
        this.timer = null;
        if (this.stopped) return;
        this.setStatus("connecting");
        this.open();
      }, this.delay);
      this.delay = Math.min(this.delay * 2, 2000);
    };
  }

  close(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      // closing a socket still connecting logs a console error in Chromium: close it once it opens
      if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close();
      else ws.close();
    }
    this.setStatus("closed");
  }
}

async function errorOf(response: Response): Promise<SoukError> {
  let code = "http_error";
  let message = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { code?: string; message?: string };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.message === "string") message = body.message;
  } catch {
    // not JSON: keep the status
  }
  const retry = Number.parseFloat(response.headers.get("retry-after") ?? "");
  return new SoukError(response.status, code, message, Number.isFinite(retry) ? retry : null);
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
