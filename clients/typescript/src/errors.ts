// SoukError: every answer that is not a success, with the server's stable code (services/gateway/errors.py).

/** Codes the server answers with (a 4xx/5xx body's `code`, a socket's close reason), and the library's own. */
export type KnownErrorCode =
  // the library's own (status 0: no answer from the server)
  | "unreachable" // the server could not be reached (a fetch that failed, a socket never opened)
  | "timeout" // no answer within the client's timeout
  | "bad_answer" // an answer that is not the JSON expected
  | "no_websocket" // no WebSocket constructor: pass one (Node 20 has none unless --experimental-websocket)
  // the server's
  | "bad_request" | "bad_command" | "bad_version" | "bad_page" | "bad_filter" | "bad_seed" | "bad_record"
  | "bad_request_id" | "bad_token" | "missing_token" | "not_found" | "game_not_found" | "archived"
  | "rate_limited" | "too_many_open_games" | "store_unavailable" | "engine_timeout" | "internal_error"
  | "not_projected" | "view_not_ready" | "stale" | "superseded" | "seat_taken" | "game_started" | "game_exists"
  | "game_not_over" | "game_cancelled" | "undo_pending" | "undo_not_allowed" | "not_your_turn"
  | "platform_command" | "body_too_large";

/** Read models not built yet: asked again, they will be. */
export const RETRIED_CODES: readonly string[] = ["not_projected", "view_not_ready"];

export class SoukError extends Error {
  /** The HTTP status (a socket's close code less 4000; 0 when the server gave no answer). */
  readonly status: number;
  /** The API's stable code (`rate_limited`, `not_your_turn`, ...): a game's rule violations have their own. */
  readonly code: KnownErrorCode | (string & {});
  /** Seconds the server asked to wait before asking again (429, 503), else null. */
  readonly retryAfter: number | null;

  constructor(status: number, code: string, message: string, retryAfter: number | null = null) {
    super(`${status} ${code}: ${message}`);
    this.name = "SoukError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** Asking again may succeed: no answer, a server failure, a rate limit, or views not built yet. */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500 || this.status === 429 || RETRIED_CODES.includes(this.code);
  }
}

/** The error of an HTTP answer that is not a success (its body `{code, message}` when it is JSON). */
export async function errorOf(response: Response): Promise<SoukError> {
  let code = "http_error";
  let message = `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { code?: unknown; message?: unknown };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.message === "string") message = body.message;
  } catch {
    // not JSON: keep the status
  }
  return new SoukError(response.status, code, message, retryAfterOf(response.headers.get("retry-after")));
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date (null when absent or unreadable). */
export function retryAfterOf(header: string | null): number | null {
  if (header === null || header.trim() === "") return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
