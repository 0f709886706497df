// One HTTP call, resent while a resend may cure its failure: every call of the library is safe to resend
// (creates, joins and forks carry a request id, commands a command id, both made once and kept across resends).
import { SoukError, errorOf } from "./errors.js";
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export class Transport {
    baseUrl;
    retries;
    timeoutMs;
    fetch;
    firstDelayMs;
    maxDelayMs;
    sleep;
    constructor(options = {}) {
        this.baseUrl = (options.baseUrl ?? "").replace(/\/+$/, "");
        const found = options.fetch ?? (globalThis.fetch ? globalThis.fetch.bind(globalThis) : undefined);
        if (found === undefined)
            throw new SoukError(0, "no_fetch", "no fetch: pass one as the `fetch` option");
        this.fetch = found;
        this.retries = options.retries ?? 5;
        this.timeoutMs = options.timeoutMs ?? 15000;
        this.firstDelayMs = options.firstDelayMs ?? 100;
        this.maxDelayMs = options.maxDelayMs ?? 2000;
        this.sleep = options.sleep ?? sleep;
    }
    url(path, query) {
        const params = new URLSearchParams();
        for (const [key, value] of Object.entries(query ?? {})) {
            if (value !== undefined && value !== null)
                params.set(key, String(value));
        }
        const search = params.toString();
        return `${this.baseUrl}${path}${search ? `?${search}` : ""}`;
    }
    /** The answer's JSON; a failure is resent while `retryable` (no answer, 5xx, 429/503 after Retry-After, read
     * models not built yet), at most `retries` times; any other failure throws SoukError at once. */
    async json(method, path, options = {}) {
        const response = await this.call(method, path, options);
        try {
            return (await response.json());
        }
        catch (error) {
            throw new SoukError(response.status, "bad_answer", `the answer to ${method} ${path} is not JSON: ${error}`);
        }
    }
    async call(method, path, options = {}) {
        const headers = { accept: "application/json" };
        if (options.token)
            headers.authorization = `Bearer ${options.token}`;
        let body;
        if (options.body !== undefined) {
            headers["content-type"] = "application/json";
            body = JSON.stringify(options.body); // made once: every resend carries the same ids
        }
        const url = this.url(path, options.query);
        let delay = this.firstDelayMs;
        for (let attempt = 0;; attempt++) {
            let error;
            const abort = new AbortController();
            const timer = setTimeout(() => abort.abort(), this.timeoutMs);
            try {
                const response = await this.fetch(url, { method, headers, body, signal: abort.signal });
                if (response.ok) {
                    // the body is read before the timer stops: a connection lost while reading it is resent too
                    const text = await response.text();
                    return new Response(text, { status: response.status, headers: response.headers });
                }
                error = await errorOf(response);
            }
            catch (thrown) {
                if (thrown instanceof SoukError)
                    throw thrown;
                error = abort.signal.aborted
                    ? new SoukError(0, "timeout", `${method} ${path}: no answer within ${this.timeoutMs} ms`)
                    : new SoukError(0, "unreachable", `${method} ${path}: ${describe(thrown)}`);
            }
            finally {
                clearTimeout(timer);
            }
            if (!error.retryable || attempt >= this.retries)
                throw error;
            await this.sleep(error.retryAfter !== null ? error.retryAfter * 1000 : delay);
            delay = Math.min(delay * 2, this.maxDelayMs);
        }
    }
}
function describe(thrown) {
    if (thrown instanceof Error) {
        const cause = thrown.cause;
        return cause instanceof Error ? `${thrown.message} (${cause.message})` : thrown.message;
    }
    return String(thrown);
}
/** A random id of `bytes` bytes as hex (request ids: 16 to 100 characters; command ids). */
export function randomId(bytes = 16) {
    const data = new Uint8Array(bytes);
    globalThis.crypto.getRandomValues(data);
    return Array.from(data, (b) => b.toString(16).padStart(2, "0")).join("");
}
