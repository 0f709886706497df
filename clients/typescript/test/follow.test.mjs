// follow(): views pushed over the WebSocket, every one in order; a lost connection reported ("down"),
// reconnected with ?from= the last version seen, the history missed meanwhile caught up, nothing skipped.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SOUK_URL, flakyWebSocket, lib, playOut, startedGame, until } from "./support.mjs";

for (const patches of [false, true]) {
  test(`a seat's follow reconnects after a lost connection and catches up${patches ? " (JSON Patch frames)" : ""}`,
    { timeout: 300_000 }, async () => {
      const net = flakyWebSocket();
      const client = new lib.SoukClient({ baseUrl: SOUK_URL, WebSocket: net.WebSocket });
      const { gameId, seats } = await startedGame(client, "yspahan", "follow");
      const views = [];
      const pages = [];
      const statuses = [];
      const follow = seats[0].follow({
        onView: (view) => views.push(view),
        onHistory: (page) => pages.push(page),
        onStatus: (status) => statuses.push(status),
      }, { patches });
      await until(() => follow.status === "open" && views.length > 0, 10000, "the first view");
      assert.equal(views[0].seat, 0);

      await playOut(client, gameId, seats, { until: (v) => v >= 10, seed: 3 });
      await until(() => follow.version >= 10, 10000, "version 10 pushed");
      const cutAt = follow.version;
      net.offline = true;
      net.cut();
      await until(() => follow.status === "down", 5000, "down");
      // the game moves on while this seat is away
      const moved = await playOut(client, gameId, seats, { until: (v) => v >= cutAt + 8, seed: 4 });
      assert.equal(follow.version, cutAt); // nothing came meanwhile
      net.offline = false;
      await until(() => follow.version >= moved.version, 15000, "the catch-up");
      assert.equal(follow.status, "open");
      assert.ok(statuses.includes("down"));
      assert.match(net.lastUrl, new RegExp(`from=${cutAt}`));
      // the entries missed, each once, in order, from the one after the cut
      const missed = pages.flatMap((page) => page.entries.map((e) => e.seq));
      assert.deepEqual(missed, missed.map((_, i) => cutAt + 1 + i));
      assert.ok(missed.at(-1) >= moved.version - 1 && missed.at(-1) <= moved.version, `${missed} ${moved.version}`);

      // to the end: the views keep coming, each of them as the seat's GET shows it
      const last = await playOut(client, gameId, seats, { seed: 5 });
      await until(() => views.at(-1).version === last.version && views.at(-1).status === "over", 15000, "the end");
      const versions = views.map((v) => v.version);
      assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
      const final = await seats[0].view();
      const pushed = views.at(-1);
      assert.deepEqual({ ...pushed, presence: [] }, { ...final, presence: [] });
      assert.equal(seats[0].version, last.version); // follow() keeps the seat's newest version
      follow.close();
      assert.equal(follow.status, "closed");
      assert.equal(statuses.at(-1), "closed");
    });
}

test("a spectator's follow sees every version when it reads fast enough, and a refused socket ends it", async () => {
  const client = new lib.SoukClient({ baseUrl: SOUK_URL });
  const { gameId, seats } = await startedGame(client, "samarkand", "spectate");
  const views = [];
  const follow = client.follow(gameId, { onView: (view) => views.push(view) });
  await until(() => views.length > 0, 10000, "the first view");
  assert.equal(views[0].seat, null);
  const last = await playOut(client, gameId, seats, { until: (v) => v >= 15, seed: 9 });
  await until(() => follow.version >= last.version, 10000, "the pushes");
  follow.close();

  const errors = [];
  const statuses = [];
  const refused = client.seat(gameId, 1, "bad-token").follow({
    onError: (error) => errors.push(error), onStatus: (s, detail) => statuses.push([s, detail]),
  });
  await until(() => refused.status === "closed", 10000, "the refusal");
  assert.equal(errors[0].status, 401);
  assert.equal(errors[0].code, "bad_token");
  assert.deepEqual(statuses.at(-1), ["closed", "bad_token"]);
});

test("without a WebSocket constructor, follow() says so clearly", () => {
  const saved = globalThis.WebSocket;
  try {
    delete globalThis.WebSocket;
    const client = new lib.SoukClient({ baseUrl: SOUK_URL });
    assert.throws(() => client.follow("g", {}), (e) => e instanceof lib.SoukError && e.code === "no_websocket");
  } finally {
    globalThis.WebSocket = saved;
  }
});

test("a seat's send goes on its followed socket opened with commands, and over HTTP when it is not open",
  { timeout: 120_000 }, async () => {
    const posted = [];
    const fetch = (url, init) => {
      if (init?.method === "POST" && String(url).endsWith("/commands")) posted.push(String(url));
      return globalThis.fetch(url, init);
    };
    const net = flakyWebSocket();
    const frames = [];
    class Counting extends net.WebSocket {
      send(data) {
        frames.push(JSON.parse(data));
        super.send(data);
      }
    }
    const client = new lib.SoukClient({ baseUrl: SOUK_URL, WebSocket: Counting, fetch });
    const { seats } = await startedGame(client, "yspahan", "ws commands");
    const latest = [null, null];
    const follows = seats.map((seat, n) => seat.follow({ onView: (view) => { latest[n] = view; } },
      { commands: true }));
    await until(() => follows.every((f) => f.status === "open") && latest.every((v) => v !== null), 10000, "open");
    const turn = async () => {
      await until(() => latest[0].version === latest[1].version && latest[0].flow.awaiting.length > 0, 10000,
        "both seats on the newest view");
      const n = latest[0].flow.awaiting[0];
      return { n, view: latest[n] };
    };
    let accepted = 0;
    while (accepted < 6) {
      const { n, view } = await turn();
      const reply = await seats[n].send(view.legal[0], { expectedVersion: view.version });
      assert.equal(reply.status, "accepted");
      assert.equal(seats[n].version, reply.version);
      accepted++;
      await until(() => latest[n].version >= reply.version, 10000, "the view pushed");
    }
    assert.deepEqual(posted, []); // every command went on a socket
    assert.equal(frames.filter((f) => f.type === "souk.Command").length, 6);
    assert.ok(frames.every((f) => typeof f.command_id === "string" && typeof f.expected_version === "number"));

    // refused on the socket: the same SoukError as over HTTP
    const { n, view } = await turn();
    const other = 1 - n;
    await assert.rejects(seats[other].send(view.legal[0], { expectedVersion: null }),
      (error) => error instanceof lib.SoukError && error.status === 422 && error.code === "not_your_turn");
    await assert.rejects(seats[n].send(view.legal[0], { expectedVersion: view.version - 1 }),
      (error) => error instanceof lib.SoukError && error.status === 409 && error.code === "stale");
    assert.deepEqual(posted, []);

    // the socket lost: HTTP (then reconnected, the socket again); closed: HTTP
    net.offline = true;
    net.cut();
    await until(() => follows[n].status === "down", 5000, "down");
    const byHttp = await seats[n].send(view.legal[0], { expectedVersion: view.version });
    assert.equal(byHttp.status, "accepted");
    assert.equal(posted.length, 1);
    net.offline = false;
    await until(() => follows.every((f) => f.status === "open"), 15000, "reopened");
    // open is not caught up: until the catch-up's view comes, each seat holds its view from before the cut
    await until(() => latest.every((v) => v.version >= byHttp.version), 15000, "the catch-up");
    const next = await turn();
    const again = await seats[next.n].send(next.view.legal[0], { expectedVersion: next.view.version });
    assert.equal(again.status, "accepted");
    assert.equal(posted.length, 1);
    for (const follow of follows) follow.close();
    const last = await seats[again.seat === next.n ? next.n : next.n].legal();
    const awaited = last.legal.length > 0 ? seats[next.n] : seats[1 - next.n];
    const legal = (await awaited.legal()).legal;
    await awaited.send(legal[0]);
    assert.equal(posted.length, 2);
  });
