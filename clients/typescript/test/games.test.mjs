// A game of each title played to its end through the library against a real `souk serve` (SOUK_URL), each
// seat picking among its view's legal commands; the record of the end is downloaded and verified.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SEATS, SOUK_URL, botChoice, lib, playOut, startedGame } from "./support.mjs";

const client = new lib.SoukClient({ baseUrl: SOUK_URL });

test("the catalog lists every title this suite plays", async () => {
  const names = (await client.catalog()).map((info) => info.name).sort();
  assert.deepEqual(names, Object.keys(SEATS).sort());
});

for (const game of Object.keys(SEATS)) {
  test(`a game of ${game} is played to its end through the library`, { timeout: 600_000 }, async () => {
    const { gameId, seats } = await startedGame(client, game);
    const entry = await client.game(gameId);
    assert.equal(entry.status, "playing");
    assert.deepEqual(entry.seats.map((s) => s.name), seats.map((_, n) => `node${n}`));
    // 1001 Karawane does not end under random play: its seats follow the game's own bot (services/bots, seeker)
    const pick = game === "karawane" ? botChoice : undefined;
    const last = await playOut(client, gameId, seats, { pick, seed: 7 });
    assert.equal(last.status, "over");
    assert.equal(last.game, game);
    assert.ok(last.result && last.result.scores.length === SEATS[game], JSON.stringify(last.result));
    const mine = await seats[0].view();
    assert.equal(mine.seat, 0);
    assert.deepEqual(mine.legal, []);

    // the history pages as a seat may see them, each entry once, in order
    let after = 0;
    const seqs = [];
    for (;;) {
      const page = await seats[1].history({ after, limit: 200 });
      seqs.push(...page.entries.map((e) => e.seq));
      if (page.entries.length < 200) break;
      after = page.next_after;
    }
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
    assert.equal(seqs.at(-1), last.version);

    // the record of the finished game holds, checked by the server
    const record = await client.record(gameId);
    const verdict = await client.verify(record);
    assert.equal(verdict.ok, true, verdict.summary);
    assert.ok(verdict.commands > 0);
    // and as a file keeps it: the text as served, posted as it is (a tampered byte is caught)
    const text = await client.recordText(gameId);
    assert.deepEqual((await client.verify(text)).ok, true);
    const tampered = text.replace(/"head":"(.)/, (_, c) => `"head":"${c === "0" ? "1" : "0"}`);
    assert.notEqual(tampered, text);
    assert.equal((await client.verify(tampered)).ok, false);
  });
}

test("a lobby pages with its cursor and filters by game and status", async () => {
  const created = [];
  for (let n = 0; n < 3; n++) created.push((await client.create({ game: "yspahan", title: `page ${n}`, seats: 2 })).game_id);
  const first = await client.lobby({ game: "yspahan", status: "open", limit: 2 });
  assert.equal(first.entries.length, 2);
  assert.ok(first.next);
  const second = await client.lobby({ game: "yspahan", status: "open", limit: 2, cursor: first.next });
  const listed = [...first.entries, ...second.entries].map((e) => e.game_id);
  for (const id of created) assert.ok(listed.includes(id), id);
  assert.ok([...first.entries, ...second.entries].every((e) => e.game === "yspahan" && e.status === "open"));
});

test("a create resent with its request id answers the same game; a join, the same seat and token", async () => {
  const body = { game: "samarkand", title: "same", seats: 3 };
  const a = await client.create(body, { requestId: "node-request-id-0123456789abcdef" });
  const b = await client.create(body, { requestId: "node-request-id-0123456789abcdef" });
  assert.equal(a.game_id, b.game_id);
  const j1 = await client.join(a.game_id, { name: "x" }, { requestId: "node-join-id-0123456789abcdef01" });
  const j2 = await client.join(a.game_id, { name: "x" }, { requestId: "node-join-id-0123456789abcdef01" });
  assert.equal(j1.seat, j2.seat);
  assert.equal(j1.token, j2.token);
  const rejoined = client.seat(a.game_id, j1.seat, j1.token);
  assert.equal((await rejoined.view()).seat, j1.seat);
});

test("a refusal is a SoukError with the server's status and stable code, and changes nothing", async () => {
  const { gameId, seats } = await startedGame(client, "yspahan", "refusals");
  const before = await client.view(gameId);
  const idle = [0, 1].find((n) => !before.flow.awaiting.includes(n));
  await assert.rejects(client.game("no-such-game"), (e) => e instanceof lib.SoukError && e.status === 404);
  await assert.rejects(client.lobby({ status: "sleeping" }), (e) => e.status === 400 && e.code === "bad_filter");
  const bad = client.seat(gameId, 0, "not-the-token");
  await assert.rejects(bad.view(), (e) => e.status === 401 && e.code === "bad_token");
  const awaited = seats[before.flow.awaiting[0]];
  const view = await awaited.view();
  await assert.rejects(awaited.send(view.legal[0], { expectedVersion: view.version - 1 }),
    (e) => e.status === 409 && e.code === "stale");
  if (idle !== undefined) {
    await assert.rejects(seats[idle].send(view.legal[0]), (e) => e instanceof lib.SoukError && e.status === 422);
  }
  assert.equal((await client.view(gameId)).version, before.version);
});

test("a command resent with its command id is answered again, never played twice", async () => {
  const { gameId, seats } = await startedGame(client, "yspahan", "resend");
  const spectator = await client.view(gameId);
  const seat = seats[spectator.flow.awaiting[0]];
  const view = await seat.view();
  const first = await seat.send(view.legal[0], { commandId: "node-resent-command", expectedVersion: view.version });
  const again = await seat.send(view.legal[0], { commandId: "node-resent-command", expectedVersion: view.version });
  assert.equal(again.version, first.version);
  assert.equal((await client.view(gameId, { minVersion: first.version })).version, first.version);
});

test("time travel: a view at a past version, for a spectator and for a seat", async () => {
  const { gameId, seats } = await startedGame(client, "yspahan", "travel");
  const last = await playOut(client, gameId, seats, { until: (v) => v >= 12 });
  // a version inside a command shows the game before that command: at most the version asked for
  const past = await client.view(gameId, { at: 5 });
  assert.ok(past.version >= 1 && past.version <= 5, String(past.version));
  assert.equal((await client.view(gameId, { at: past.version })).version, past.version);
  const newest = seats[0].version;
  const mine = await seats[0].view({ at: past.version });
  assert.equal(mine.version, past.version);
  assert.equal(mine.seat, 0);
  assert.equal(seats[0].version, newest); // a past view is not the newest this seat saw
});
