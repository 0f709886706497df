// One HTTP call, resent while a resend may cure its failure: every call of the library is safe to resend
// (creates, joins and forks carry a request id, commands a command id, both made once and kept across resends).

import { SoukError, errorOf } from "./errors.js";

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** The server's URL ("" in a browser page served by the gateway: same origin). */
  baseUrl?: string;
  /** fetch to use (default globalThis.fetch). */
  fetch?: FetchLike;
  /** How many times a failed call is resent (default 5): 6 tries in all. */
  retries?: number;
  /** Milliseconds a call may take before it is abandoned and resent (default 15000: the server waits up to 5 s
   * for the engine and 3 s for the views). */
  timeoutMs?: number;
  /** Milliseconds before the first resend, doubling up to `maxDelayMs` (default 100 and 2000). A Retry-After
   * answer waits what it says instead. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Waits (for tests): default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

export interface CallOptions {
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
  /** A seat's token (or the creator's): sent as `Authorization: Bearer`. */
  token?: string;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class Transport {
  readonly baseUrl: string;
  readonly retries: number;
  readonly timeoutMs: number;
  private readonly fetch: FetchLike;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: TransportOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "").replace(/\/+$/, "");
    const found = options.fetch ?? (globalThis.fetch ? globalThis.fetch.bind(globalThis) : undefined);
    if (found === undefined) throw new SoukError(0, "no_fetch", "no fetch: pass one as the `fetch` option");
    this.fetch = found;
    this.retries = options.retries ?? 5;
    this.timeoutMs = options.timeoutMs ?? 15000;
    this.firstDelayMs = options.firstDelayMs ?? 100;
    this.maxDelayMs = options.maxDelayMs ?? 2000;
    this.sleep = options.sleep ?? sleep;
  }

  url(path: string, query?: CallOptions["query"]): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) params.set(key, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ""}`;
  }

  /** The answer's JSON; a failure is resent while `retryable` (no answer, 5xx, 429/503 after Retry-After, read
   * models not built yet), at most `retries` times; any other failure throws SoukError at once. */
  async json<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const response = await this.call(method, path, options);
    try {
      return (await response.json()) as T;
    } catch (error) {
      throw new SoukError(response.status, "bad_answer", `the answer to ${method} ${path} is not JSON: ${error}`);
    }
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body); // made once: every resend carries the same ids
    }
    const url = this.url(path, options.query);
    let delay = this.firstDelayMs;
    for (let attempt = 0; ; attempt++) {
      let error: SoukError;
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
      } catch (thrown) {
        if (thrown instanceof SoukError) throw thrown;
        error = abort.signal.aborted
          ? new SoukError(0, "timeout", `${method} ${path}: no answer within ${this.timeoutMs} ms`)
          : new SoukError(0, "unreachable", `${method} ${path}: ${describe(thrown)}`);
      } finally {
        clearTimeout(timer);
      }
      if (!error.retryable || attempt >= this.retries) throw error;
      await this.sleep(error.retryAfter !== null ? error.retryAfter * 1000 : delay);
      delay = Math.min(delay * 2, this.maxDelayMs);
    }
  }
}

function describe(thrown: unknown): string {
  if (thrown instanceof Error) {
    const cause = (thrown as { cause?: unknown }).cause;
    return cause instanceof Error ? `${thrown.message} (${cause.message})` : thrown.message;
  }
  return String(thrown);
}

/** A random id of `bytes` bytes as hex (request ids: 16 to 100 characters; command ids). */
export function randomId(bytes = 16): string {
  const data = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(data);
  return Array.from(data, (b) => b.toString(16).padStart(2, "0")).join("");
}
