// The server restarts in the middle of a game (the pytest side stops `souk serve` and starts it again on the same
// port, same Redis: SOUK_CONTROL_URL/restart): the library resends its calls until the server answers again,
// follow() reports the connection down, reconnects and catches up, and the game goes on to its end.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SOUK_URL, control, lib, playOut, startedGame, until } from "./support.mjs";

test("a game goes on to its end across a restart of the server", { timeout: 300_000 }, async () => {
  // enough resends to span a restart (a few seconds): 30 tries, at most 1 s apart
  const client = new lib.SoukClient({ baseUrl: SOUK_URL, retries: 30, maxDelayMs: 1000 });
  const { gameId, seats } = await startedGame(client, "yspahan", "restart");
  const views = [];
  const statuses = [];
  const follow = seats[1].follow({ onView: (v) => views.push(v), onStatus: (s, d) => statuses.push(d ? `${s}: ${d}` : s) });
  await until(() => follow.status === "open", 10000, "open");
  const before = await playOut(client, gameId, seats, { until: (v) => v >= 10, seed: 11 });

  const stopped = await control("/restart"); // returns once the server is down; it comes back meanwhile
  assert.equal(stopped.stopped, true);
  await until(() => follow.status === "down" || statuses.some((s) => s.startsWith("down")), 10000, "the follow down");
  // the first call meets a closed port: resent until the new server answers
  const awaited = (await client.view(gameId)).flow.awaiting[0];
  assert.ok((await client.view(gameId)).version >= before.version);
  const view = await seats[awaited].view();
  const reply = await seats[awaited].send(view.legal[0], { expectedVersion: view.version });
  assert.equal(reply.status, "accepted");

  const last = await playOut(client, gameId, seats, { seed: 12 });
  assert.equal(last.status, "over");
  await until(() => views.length && views.at(-1).status === "over", 20000,
    () => `the follow's last view (${follow.status}, ${JSON.stringify(statuses)}, ${views.length} views, ` +
      `up to ${views.at(-1)?.version} ${views.at(-1)?.status}; the game at ${last.version})`);
  assert.ok(statuses.some((s) => s.startsWith("down")), JSON.stringify(statuses));
  assert.equal(follow.status, "open");
  const versions = views.map((v) => v.version);
  assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
  follow.close();
});
