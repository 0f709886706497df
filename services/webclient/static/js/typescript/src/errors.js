// SoukError: every answer that is not a success, with the server's stable code (services/gateway/errors.py).
/** Read models not built yet: asked again, they will be. */
export const RETRIED_CODES = ["not_projected", "view_not_ready"];
export class SoukError extends Error {
    /** The HTTP status (a socket's close code less 4000; 0 when the server gave no answer). */
    status;
    /** The API's stable code (`rate_limited`, `not_your_turn`, ...): a game's rule violations have their own. */
    code;
    /** Seconds the server asked to wait before asking again (429, 503), else null. */
    retryAfter;
    constructor(status, code, message, retryAfter = null) {
        super(`${status} ${code}: ${message}`);
        this.name = "SoukError";
        this.status = status;
        this.code = code;
        this.retryAfter = retryAfter;
    }
    /** Asking again may succeed: no answer, a server failure, a rate limit, or views not built yet. */
    get retryable() {
        return this.status === 0 || this.status >= 500 || this.status === 429 || RETRIED_CODES.includes(this.code);
    }
}
/** The error of an HTTP answer that is not a success (its body `{code, message}` when it is JSON). */
export async function errorOf(response) {
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
    return new SoukError(response.status, code, message, retryAfterOf(response.headers.get("retry-after")));
}
/** `Retry-After` in seconds: a number of seconds or an HTTP date (null when absent or unreadable). */
export function retryAfterOf(header) {
    if (header === null || header.trim() === "")
        return null;
    const seconds = Number(header);
    if (Number.isFinite(seconds))
        return Math.max(0, seconds);
    const date = Date.parse(header);
    return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
