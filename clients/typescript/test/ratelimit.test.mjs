// 429 handling against a server whose seat tokens have a small rate (SOUK_RATE_PER_TOKEN=1, burst 2): the
// library waits what Retry-After says and succeeds; with no resends allowed, the SoukError carries retryAfter.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SOUK_URL, lib, startedGame } from "./support.mjs";

test("over a token's rate, the library waits for Retry-After and every call succeeds", { timeout: 120_000 }, async () => {
  const answers = [];
  const counting = async (url, init) => {
    const response = await fetch(url, init);
    answers.push([response.status, response.headers.get("retry-after")]);
    return response;
  };
  const client = new lib.SoukClient({ baseUrl: SOUK_URL, fetch: counting });
  const { seats } = await startedGame(client, "yspahan", "limited");
  answers.length = 0;
  const started = Date.now();
  for (let n = 0; n < 5; n++) assert.equal((await seats[0].view()).seat, 0);
  const limited = answers.filter(([status]) => status === 429);
  assert.ok(limited.length >= 1, JSON.stringify(answers));
  assert.ok(limited.every(([, retry]) => Number(retry) >= 1));
  assert.equal(answers.filter(([status]) => status === 200).length, 5);
  // each 429 was waited out, never resent at once
  assert.ok(Date.now() - started >= 1000 * limited.length * 0.9, `${Date.now() - started} ms for ${limited.length}`);
});

test("with no resends, a 429 is a SoukError rate_limited with retryAfter", async () => {
  const client = new lib.SoukClient({ baseUrl: SOUK_URL, retries: 0 });
  const { seats } = await startedGame(new lib.SoukClient({ baseUrl: SOUK_URL }), "yspahan", "limited 2");
  const seat = client.seat(seats[0].gameId, 0, seats[0].token);
  let error;
  for (let n = 0; n < 10 && error === undefined; n++) {
    try {
      await seat.view();
    } catch (e) {
      error = e;
    }
  }
  assert.ok(error instanceof lib.SoukError);
  assert.equal(error.status, 429);
  assert.equal(error.code, "rate_limited");
  assert.ok(error.retryAfter >= 1);
  assert.ok(error.retryable);
});
