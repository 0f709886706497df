// The library without a server: JSON Patch (RFC 6902's own examples), and the transport's resends against a
// fetch that fails as networks and servers do.
import assert from "node:assert/strict";
import { test } from "node:test";
import { lib } from "./support.mjs";

const { applyPatch, PatchError, SoukClient, SoukError, Transport } = lib;

test("JSON Patch: the operations of RFC 6902's examples", () => {
  assert.deepEqual(applyPatch({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }]), { foo: "bar", baz: "qux" });
  assert.deepEqual(applyPatch({ foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }]),
    { foo: ["bar", "qux", "baz"] });
  assert.deepEqual(applyPatch({ foo: [1] }, [{ op: "add", path: "/foo/-", value: 2 }]), { foo: [1, 2] });
  assert.deepEqual(applyPatch({ baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }]), { foo: "bar" });
  assert.deepEqual(applyPatch({ foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }]),
    { foo: ["bar", "baz"] });
  assert.deepEqual(applyPatch({ baz: "qux" }, [{ op: "replace", path: "/baz", value: "boo" }]), { baz: "boo" });
  assert.deepEqual(applyPatch({ foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } },
    [{ op: "move", from: "/foo/waldo", path: "/qux/thud" }]),
  { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } });
  assert.deepEqual(applyPatch({ foo: ["all", "grass", "cows", "eat"] }, [{ op: "move", from: "/foo/1", path: "/foo/3" }]),
    { foo: ["all", "cows", "eat", "grass"] });
  assert.deepEqual(applyPatch({ a: { b: 1 } }, [{ op: "copy", from: "/a", path: "/c" }]), { a: { b: 1 }, c: { b: 1 } });
  assert.deepEqual(applyPatch({ "a/b": 1, "m~n": 2 }, [{ op: "replace", path: "/a~1b", value: 3 },
    { op: "replace", path: "/m~0n", value: 4 }]), { "a/b": 3, "m~n": 4 });
  assert.deepEqual(applyPatch({ a: 1 }, [{ op: "replace", path: "", value: [1] }]), [1]);
  assert.deepEqual(applyPatch({ baz: "qux", foo: ["a", 2, "c"] }, [{ op: "test", path: "/foo", value: ["a", 2, "c"] }]),
    { baz: "qux", foo: ["a", 2, "c"] });
});

test("JSON Patch: a patch that cannot apply throws and leaves the document as it was", () => {
  const doc = { foo: "bar", list: [1, 2] };
  for (const patch of [
    [{ op: "test", path: "/foo", value: "baz" }],
    [{ op: "remove", path: "/nope" }],
    [{ op: "replace", path: "/nope", value: 1 }],
    [{ op: "add", path: "/list/5", value: 1 }],
    [{ op: "add", path: "/missing/x", value: 1 }],
    [{ op: "replace", path: "/foo", value: 1 }, { op: "remove", path: "/list/2" }],
    [{ op: "move", from: "/list", path: "/list/0" }],
  ]) {
    assert.throws(() => applyPatch(doc, patch), PatchError, JSON.stringify(patch));
  }
  assert.deepEqual(doc, { foo: "bar", list: [1, 2] });
});

/** A fetch answering from a script: each entry a Response to give, or an Error to throw. */
function scripted(script) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    const next = script.shift();
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch, calls };
}

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

test("a command lost to the network, then a 503 with Retry-After, is resent with the same command id", async () => {
  const { fetch, calls } = scripted([
    new TypeError("fetch failed"),
    json(503, { code: "store_unavailable", message: "loading" }, { "retry-after": "0" }),
    json(502, { code: "internal_error", message: "bad gateway" }),
    json(200, { command_id: "x", game_id: "g", status: "accepted", version: 8, code: "", message: "", events: 1, seat: 0 }),
  ]);
  const waits = [];
  const client = new SoukClient({ baseUrl: "http://souk.test", fetch });
  client.transport.sleep = async (ms) => waits.push(ms);
  const seat = client.seat("g", 0, "tok");
  seat.saw(7);
  const reply = await seat.send({ type: "yspahan.Pass" });
  assert.equal(reply.version, 8);
  assert.equal(calls.length, 4);
  const bodies = calls.map((c) => JSON.parse(c.init.body));
  assert.ok(bodies.every((b) => b.command_id === bodies[0].command_id && b.expected_version === 7));
  assert.equal(calls[0].init.headers.authorization, "Bearer tok");
  assert.equal(calls[0].url, "http://souk.test/games/g/seats/0/commands");
  assert.deepEqual(waits, [100, 0, 400]); // backoff, Retry-After's 0 s, the backoff (doubling at every try)
  assert.equal(seat.version, 8);
});

test("a refusal is not resent; the tries are bounded", async () => {
  const refused = scripted([json(422, { code: "not_your_turn", message: "wait" })]);
  const client = new SoukClient({ baseUrl: "http://souk.test", fetch: refused.fetch });
  await assert.rejects(client.seat("g", 1, "t").send({ type: "yspahan.Pass" }),
    (e) => e instanceof SoukError && e.status === 422 && e.code === "not_your_turn" && !e.retryable);
  assert.equal(refused.calls.length, 1);

  const down = scripted(Array.from({ length: 10 }, () => new TypeError("fetch failed")));
  const transport = new Transport({ baseUrl: "http://souk.test", fetch: down.fetch, retries: 3, sleep: async () => {} });
  await assert.rejects(transport.json("GET", "/catalog"), (e) => e.status === 0 && e.code === "unreachable");
  assert.equal(down.calls.length, 4);
});

test("a create's and a join's request ids are made once and kept across resends", async () => {
  const { fetch, calls } = scripted([
    json(500, { code: "internal_error", message: "x" }),
    json(201, { game_id: "g1", version: 1, creator_token: "c", invite_code: null, webhook_secret: null }),
    new TypeError("fetch failed"),
    json(201, { game_id: "g1", seat: 0, token: "t0", version: 2, webhook_secret: null }),
  ]);
  const client = new SoukClient({ baseUrl: "http://souk.test", fetch });
  client.transport.sleep = async () => {};
  assert.equal((await client.create({ game: "yspahan", title: "t", seats: 2 })).game_id, "g1");
  const seat = await client.join("g1", { name: "ana" });
  assert.equal(seat.token, "t0");
  const [c1, c2, j1, j2] = calls.map((c) => JSON.parse(c.init.body));
  assert.equal(c1.request_id, c2.request_id);
  assert.ok(c1.request_id.length >= 16 && c1.request_id.length <= 100);
  assert.equal(j1.request_id, j2.request_id);
  assert.equal(j1.entropy, j2.entropy);
  assert.match(j1.entropy, /^[0-9a-f]{64}$/);
});

test("a call that gets no answer in time is abandoned and resent", async () => {
  let n = 0;
  const fetch = (url, init) => new Promise((resolve, reject) => {
    if (n++ === 0) {
      init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
    } else {
      resolve(json(200, []));
    }
  });
  const transport = new Transport({ baseUrl: "http://souk.test", fetch, timeoutMs: 50, sleep: async () => {} });
  assert.deepEqual(await transport.json("GET", "/catalog"), []);
  assert.equal(n, 2);
});

test("Retry-After as an HTTP date is waited for too", async () => {
  const { fetch } = scripted([
    json(429, { code: "rate_limited", message: "slow" }, { "retry-after": new Date(Date.now() + 3000).toUTCString() }),
    json(200, []),
  ]);
  const waits = [];
  const transport = new Transport({ fetch, sleep: async (ms) => waits.push(ms) });
  await transport.json("GET", "/catalog");
  assert.ok(waits[0] > 1000 && waits[0] <= 3000, String(waits));
});

/** A WebSocket that never opens nor fails (a server going away mid-handshake), or that opens at once. */
function fakeSockets() {
  const made = [];
  class Fake {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.onopen = this.onmessage = this.onclose = this.onerror = null;
      this.closed = false;
      made.push(this);
    }
    close() {
      this.closed = true;
    }
  }
  return { Fake, made };
}

test("follow(): a connection that does not open in time is given up and tried again", async () => {
  const { Fake, made } = fakeSockets();
  const statuses = [];
  const client = new SoukClient({ baseUrl: "http://souk.test", WebSocket: Fake, openTimeoutMs: 30 });
  const follow = client.follow("g1", { onStatus: (s, d) => statuses.push(d ? `${s}: ${d}` : s) });
  await new Promise((resolve) => setTimeout(resolve, 250));
  assert.ok(made.length >= 2, `${made.length} sockets`);
  assert.ok(made.slice(0, -1).every((s) => s.closed));
  assert.equal(made[0].url, "ws://souk.test/games/g1/ws");
  assert.ok(statuses.includes("down: not open after 30 ms"), JSON.stringify(statuses));
  follow.close();
  assert.equal(follow.status, "closed");
});

test("follow(): views in order, catch-up pages once, a patch applied, one that cannot apply makes it reconnect", async () => {
  const { Fake, made } = fakeSockets();
  const views = [];
  const pages = [];
  const client = new SoukClient({ baseUrl: "https://souk.test", WebSocket: Fake });
  const follow = client.seat("g1", 1, "t/k").follow({ onView: (v) => views.push(v), onHistory: (p) => pages.push(p) },
    { patches: true });
  const socket = made[0];
  assert.equal(socket.url, "wss://souk.test/games/g1/seats/1/ws?token=t%2Fk&patch=1");
  socket.onopen({});
  const send = (s, frame) => s.onmessage({ data: JSON.stringify(frame) });
  send(socket, { version: 3, seat: 1, view: { n: 3 }, presence: [] });
  send(socket, { patch: [{ op: "replace", path: "/version", value: 4 }, { op: "replace", path: "/view/n", value: 4 }],
    from: 3, version: 4 });
  assert.deepEqual(views.map((v) => [v.version, v.view.n]), [[3, 3], [4, 4]]);
  assert.equal(follow.version, 4);
  // a patch from a view it does not hold: dropped, and a new socket from the last version
  send(socket, { patch: [{ op: "replace", path: "/version", value: 9 }], from: 7, version: 9 });
  assert.equal(views.length, 2);
  assert.ok(socket.closed);
  const again = made[1];
  assert.equal(again.url, "wss://souk.test/games/g1/seats/1/ws?token=t%2Fk&from=4&patch=1");
  again.onopen({});
  const entry = (seq) => ({ seq, type: "t", seat: null, command_id: "c", recorded_at: 0, event: {}, hash: "", prev_hash: "" });
  send(again, { game_id: "g1", seat: 1, entries: [entry(5), entry(6)], next_after: 6, version: 9 });
  send(again, { game_id: "g1", seat: 1, entries: [entry(6), entry(7), entry(8), entry(9)], next_after: 9, version: 9 });
  send(again, { version: 9, seat: 1, view: { n: 9 }, presence: [] });
  send(again, { version: 9, seat: 1, view: { n: 9 }, presence: [] }); // the same again: not handed over twice
  send(again, { version: 9, seat: 1, view: { n: 9 }, presence: [{ seat: 0 }] }); // presence changed: handed over
  assert.deepEqual(pages.map((p) => p.entries.map((e) => e.seq)), [[5, 6], [7, 8, 9]]);
  assert.deepEqual(views.map((v) => v.version), [3, 4, 9, 9]);
  // a patch whose test fails: the view is kept as it was, and it reconnects
  send(again, { patch: [{ op: "test", path: "/view/n", value: 1 }], from: 9, version: 9 });
  assert.equal(made.length, 3);
  assert.deepEqual(views.at(-1).view, { n: 9 });
  // a refusal (4401) ends it
  const statuses = [];
  const errors = [];
  const refused = client.follow("g2", { onStatus: (s, d) => statuses.push([s, d]), onError: (e) => errors.push(e) });
  made.at(-1).onclose({ code: 4404, reason: "game_not_found" });
  assert.equal(refused.status, "closed");
  assert.deepEqual(statuses.at(-1), ["closed", "game_not_found"]);
  assert.equal(errors[0].status, 404);
  follow.close();
});

test("a 429 other than rate_limited (too_many_open_games) is not waited for; 503 is", async () => {
  const open = scripted([json(429, { code: "too_many_open_games", message: "fill one first" }, { "retry-after": "60" })]);
  const client = new SoukClient({ baseUrl: "http://souk.test", fetch: open.fetch });
  await assert.rejects(client.create({ game: "yspahan", title: "t", seats: 2 }),
    (e) => e.code === "too_many_open_games" && e.retryAfter === 60 && !e.retryable);
  assert.equal(open.calls.length, 1);
  assert.ok(new SoukError(503, "store_unavailable", "loading", 1).retryable);
  assert.ok(new SoukError(429, "rate_limited", "slow", 1).retryable);
});
