// SoukClient (the lobby, games, spectators) and Seat (one seat of one game, with its token): Souk's HTTP API with
// request ids, command ids and resends (transport.ts), and live views over a WebSocket (follow.ts).

import { SoukError } from "./errors.js";
import { Follower, type Follow, type FollowHandlers, type FollowOptions, type WebSocketLike } from "./follow.js";
import { Transport, randomId, type FetchLike } from "./transport.js";
import type {
  AnyTableView,
  CommandOf,
  Created,
  Forked,
  GameInfo,
  GameName,
  HistoryPage,
  Joined,
  Left,
  LegalCommands,
  LobbyEntry,
  RecordVerdict,
  Rematch,
  Reply,
} from "./wire.js";
import type { CommandFrame } from "./wire.js";

export interface SoukClientOptions {
  /** The server's URL; "" (the default) in a page the gateway serves: same origin. */
  baseUrl?: string;
  /** fetch to use (default globalThis.fetch). */
  fetch?: FetchLike;
  /** WebSocket constructor for follow() (default globalThis.WebSocket; Node 20 has one only with
   * --experimental-websocket). */
  WebSocket?: WebSocketLike;
  /** Milliseconds a follow()'s connection may take to open before it is tried again (default 5000). */
  openTimeoutMs?: number;
  /** Resends of a call that failed in a way a resend may cure (default 5). */
  retries?: number;
  /** Milliseconds before a call without answer is abandoned and resent (default 15000). */
  timeoutMs?: number;
  /** Milliseconds before the first resend (default 100), doubling up to maxDelayMs (default 2000). */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export interface CreateOptions {
  game: GameName | (string & {});
  title: string;
  seats: number;
  /** The game's options and the table's (`undo`, `clock`): see catalog(). */
  options?: Record<string, unknown>;
  private?: boolean;
  webhook?: string;
  /** 64 hex digits: a reproducible game (tests); only with `unfair: true`. */
  seed?: string;
  unfair?: boolean;
}

export interface JoinOptions {
  name: string;
  seat?: number;
  /** A private game's invite code. */
  invite?: string;
  webhook?: string;
  /** The seat's share of the game's chance (64 hex digits): drawn here unless given ("" gives none). */
  entropy?: string;
}

export interface RequestOptions {
  /** The id that makes a resend answer the same game or seat (made here unless given: 32 hex digits). */
  requestId?: string;
}

export interface SendOptions {
  /** Refused as 409 `stale` if the game moved on since this version. Default: the newest version this handle saw
   * (view, legal, follow, a reply); null: no check. */
  expectedVersion?: number | null;
  /** The command's id (made here unless given): a resend with it is never applied twice. */
  commandId?: string;
}

export interface LobbyQuery {
  game?: GameName | (string & {});
  status?: "open" | "playing" | "over" | "cancelled";
  limit?: number;
  cursor?: string;
}

export interface FillBotsOptions {
  seats?: number[];
  strategy?: string;
}

export class SoukClient {
  readonly transport: Transport;
  private readonly WebSocket?: WebSocketLike;
  private readonly openTimeoutMs?: number;

  constructor(options: SoukClientOptions = {}) {
    this.transport = new Transport(options);
    this.WebSocket = options.WebSocket;
    this.openTimeoutMs = options.openTimeoutMs;
  }

  // --- the lobby ----------------------------------------------------------------------------------------

  /** The games this server plays, their seat counts and options (the table's: clock, undo). */
  catalog(): Promise<GameInfo[]> {
    return this.transport.json("GET", "/catalog");
  }

  /** One page of the lobby, newest first, and the cursor of the next page (null: the last page). */
  async lobby(query: LobbyQuery = {}): Promise<{ entries: LobbyEntry[]; next: string | null }> {
    const response = await this.transport.call("GET", "/games", { query: { ...query } });
    return { entries: (await response.json()) as LobbyEntry[], next: response.headers.get("x-next-cursor") };
  }

  /** A game's lobby entry (its seats, status, presence). */
  game(gameId: string): Promise<LobbyEntry> {
    return this.transport.json("GET", `/games/${enc(gameId)}`);
  }

  /** Creates a game; a resend (same request id, kept across the library's own resends) answers the same game. */
  create(options: CreateOptions, { requestId }: RequestOptions = {}): Promise<Created> {
    const body: Record<string, unknown> = {
      game: options.game, title: options.title, seats: options.seats, options: options.options ?? {},
      request_id: requestId ?? randomId(),
    };
    for (const key of ["private", "webhook", "seed", "unfair"] as const) {
      if (options[key] !== undefined) body[key] = options[key];
    }
    return this.transport.json("POST", "/games", { body });
  }

  /** Takes a seat (the lowest free one unless `seat`); a resend answers the same seat and token. */
  async join<G extends GameName = GameName>(gameId: string, options: JoinOptions,
    { requestId }: RequestOptions = {}): Promise<Seat<G>> {
    const body: Record<string, unknown> = {
      name: options.name, seat: options.seat ?? null, request_id: requestId ?? randomId(),
      entropy: options.entropy ?? randomId(32),
    };
    if (options.invite !== undefined) body.invite = options.invite;
    if (options.webhook !== undefined) body.webhook = options.webhook;
    const joined = await this.transport.json<Joined>("POST", `/games/${enc(gameId)}/seats`, { body });
    const seat = new Seat<G>(this, joined.game_id, joined.seat, joined.token);
    seat.webhookSecret = joined.webhook_secret;
    seat.saw(joined.version);
    return seat;
  }

  /** The handle of a seat taken earlier, from its stored token (no request). */
  seat<G extends GameName = GameName>(gameId: string, seat: number, token: string): Seat<G> {
    return new Seat<G>(this, gameId, seat, token);
  }

  /** Fills the game's free seats with the server's bots (POST /games/{id}/bots). */
  fillBots(gameId: string, options: FillBotsOptions = {}): Promise<unknown> {
    return this.transport.json("POST", `/games/${enc(gameId)}/bots`, { body: { ...options } });
  }

  /** Cancels a game that has not started, with the creator token its creation answered. */
  cancel(gameId: string, creatorToken: string): Promise<unknown> {
    return this.transport.json("DELETE", `/games/${enc(gameId)}`, { token: creatorToken });
  }

  // --- spectators, records ------------------------------------------------------------------------------

  /** The spectator's view; `at`: as it was at that version (time travel); `minVersion` waits (3 s) for it. */
  view<G extends GameName = GameName>(gameId: string, { at, minVersion }: { at?: number; minVersion?: number } = {}):
    Promise<AnyTableView<G>> {
    return this.transport.json("GET", `/games/${enc(gameId)}/view`, { query: { at, min_version: minVersion } });
  }

  /** A page of the history as a spectator may see it; pass `next_after` as `after` for the next one. */
  history<G extends GameName = GameName>(gameId: string, { after, limit }: { after?: number; limit?: number } = {}):
    Promise<HistoryPage<G>> {
    return this.transport.json("GET", `/games/${enc(gameId)}/history`, { query: { after, limit } });
  }

  /** A finished game's portable record (409 game_not_over before the end). Pass it to verify() as it is. */
  record(gameId: string): Promise<unknown> {
    return this.transport.json("GET", `/games/${enc(gameId)}/record`);
  }

  /** The record as the server serves it, byte for byte: what a person downloads and keeps (a file). */
  async recordText(gameId: string): Promise<string> {
    return (await this.transport.call("GET", `/games/${enc(gameId)}/record`)).text();
  }

  /** Whether a record holds: its hash chain, its seed, every command re-run by the rules. A string (a record's
   * text, as recordText() gave it or a file holds it) is posted as it is, never parsed and serialised again. */
  verify(record: unknown): Promise<RecordVerdict> {
    return typeof record === "string"
      ? this.transport.json("POST", "/verify", { text: record })
      : this.transport.json("POST", "/verify", { body: record });
  }

  /** A new game from a finished game's position at `version` (a what-if); `token`: a seat's, for a private game. */
  fork(gameId: string, version: number, { title, requestId, token }: { title?: string; token?: string } & RequestOptions = {}):
    Promise<Forked> {
    const body: Record<string, unknown> = { version, request_id: requestId ?? randomId() };
    if (title !== undefined) body.title = title;
    return this.transport.json("POST", `/games/${enc(gameId)}/fork`, { body, token });
  }

  /** The spectator's views, live (see Follow). */
  follow<G extends GameName = GameName>(gameId: string, handlers: FollowHandlers<G>, options: FollowOptions = {}):
    Follow {
    return this.follower(`/games/${enc(gameId)}/ws`, handlers, options);
  }

  /** @internal */
  follower<G extends GameName>(path: string, handlers: FollowHandlers<G>, options: FollowOptions,
    saw?: (version: number) => void): Follower<G> {
    const url = this.transport.url(path);
    return new Follower<G>({ url, WebSocket: this.WebSocket, saw, openTimeoutMs: this.openTimeoutMs }, handlers,
      options);
  }
}

/** One seat of one game, with its secret token: what a player holds after joining. */
export class Seat<G extends GameName = GameName> {
  /** The newest version this handle saw: send()'s default expected version. */
  version: number | null = null;
  /** Signs the POSTs to the join's webhook (null without one). */
  webhookSecret: string | null = null;
  /** follow(…, { commands: true }): the socket send() uses while it is open. */
  private linked: Follower<G> | null = null;

  constructor(readonly client: SoukClient, readonly gameId: string, readonly seat: number, readonly token: string) {}

  private get path(): string {
    return `/games/${enc(this.gameId)}/seats/${this.seat}`;
  }

  /** @internal */
  saw(version: number): void {
    this.version = Math.max(this.version ?? 0, version);
  }

  /** This seat's view (its secrets, its legal commands); `at`: as it was at that version. */
  async view({ at, minVersion }: { at?: number; minVersion?: number } = {}): Promise<AnyTableView<G>> {
    const view = await this.client.transport.json<AnyTableView<G>>("GET", `${this.path}/view`,
      { query: { at, min_version: minVersion }, token: this.token });
    if (at === undefined) this.saw(view.version);
    return view;
  }

  async legal(): Promise<LegalCommands<G>> {
    const legal = await this.client.transport.json<LegalCommands<G>>("GET", `${this.path}/legal`, { token: this.token });
    this.saw(legal.version);
    return legal;
  }

  /** A page of the history as this seat may see it. */
  history({ after, limit }: { after?: number; limit?: number } = {}): Promise<HistoryPage<G>> {
    return this.client.transport.json("GET", `${this.path}/history`, { query: { after, limit }, token: this.token });
  }

  /** Sends a command (one of the view's `legal`, as it is); resent with the same command id: never applied twice.
   * Refused: SoukError (422 the rule's code, 409 stale, ...). While a follow of this handle opened with
   * `{ commands: true }` is open, the command goes on its socket (the same answers and errors); a socket that is
   * not open, or lost before the answer, and a failure a resend may cure: over HTTP, with the same command id. */
  async send(command: CommandOf<G>, options: SendOptions = {}): Promise<Reply> {
    const linked = this.linked;
    if (linked !== null && linked.canSend) {
      const expected = options.expectedVersion === undefined ? this.version : options.expectedVersion;
      const frame: CommandFrame<G> = { type: "souk.Command", command_id: options.commandId ?? randomId(), command };
      if (expected !== null) frame.expected_version = expected;
      const answer = await linked.command(frame, this.client.transport.timeoutMs);
      if (answer !== null) {
        if (answer.status === 200 && answer.reply) {
          if (answer.reply.status === "accepted" && answer.reply.version) this.saw(answer.reply.version);
          return answer.reply;
        }
        const error = new SoukError(answer.status, answer.error?.code ?? "bad_answer", answer.error?.message ?? "",
          answer.retry_after ?? null);
        if (!error.retryable) throw error;
      }
      return this.post("commands", { command }, { ...options, commandId: frame.command_id,
        expectedVersion: expected });
    }
    return this.post("commands", { command }, options);
  }

  /** Takes back this seat's last command(s): back to `toVersion` (one of the view's `undo.to_versions`). */
  undo(toVersion: number, options: SendOptions = {}): Promise<Reply> {
    return this.post("undo", { to_version: toVersion }, options);
  }

  acceptUndo(options: SendOptions = {}): Promise<Reply> {
    return this.post("undo/accept", {}, options);
  }

  declineUndo(options: SendOptions = {}): Promise<Reply> {
    return this.post("undo/decline", {}, options);
  }

  /** Leaves the game in play for good (bots play this seat); no expected version unless given. */
  resign(options: SendOptions = {}): Promise<Reply> {
    return this.post("resign", {}, { expectedVersion: null, ...options });
  }

  /** Gives the seat back before the start (after it: resigns). */
  leave(): Promise<Left> {
    return this.client.transport.json("DELETE", this.path, { token: this.token });
  }

  /** This seat in the rematch of the finished game (same players, options, seat). */
  async rematch(): Promise<Seat<G>> {
    const rematch = await this.client.transport.json<Rematch>("POST", `${this.path}/rematch`,
      { token: this.token, query: { entropy: randomId(32) } });
    const seat = new Seat<G>(this.client, rematch.game_id, rematch.seat, rematch.token);
    seat.saw(rematch.version);
    return seat;
  }

  /** This seat's views, live (see Follow); `{ commands: true }`: send() goes over its socket while it is open. */
  follow(handlers: FollowHandlers<G>, options: FollowOptions = {}): Follow {
    const follower = this.client.follower(`${this.path}/ws?token=${enc(this.token)}`, handlers, options,
      (version) => this.saw(version));
    if (!options.commands) return follower;
    this.linked = follower;
    return {
      close: () => {
        if (this.linked === follower) this.linked = null;
        follower.close();
      },
      get status() { return follower.status; },
      get version() { return follower.version; },
    };
  }

  private async post(route: string, body: Record<string, unknown>, options: SendOptions): Promise<Reply> {
    const expected = options.expectedVersion === undefined ? this.version : options.expectedVersion;
    const full: Record<string, unknown> = { command_id: options.commandId ?? randomId(), ...body };
    if (expected !== null) full.expected_version = expected;
    const reply = await this.client.transport.json<Reply>("POST", `${this.path}/${route}`,
      { body: full, token: this.token });
    if (reply.status === "accepted" && reply.version) this.saw(reply.version);
    return reply;
  }
}

const enc = encodeURIComponent;

export { SoukError };
