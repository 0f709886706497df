// What the Node tests share: the built library (SOUK_CLIENT_DIST, else ../dist: `npm run build`), the server under
// test (SOUK_URL) and the pytest side's control server (SOUK_CONTROL_URL: /choose, /restart), and a game played
// to its end through the library.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

const dist = process.env.SOUK_CLIENT_DIST ?? join(fileURLToPath(new URL(".", import.meta.url)), "..", "dist");
export const lib = await import(pathToFileURL(join(dist, "index.js")).href);
export const SOUK_URL = process.env.SOUK_URL;
export const CONTROL_URL = process.env.SOUK_CONTROL_URL;

/** The seats each title is played with here. */
export const SEATS = { istanbul: 2, karawane: 2, samarkand: 3, yspahan: 2 };

/** A seeded random number generator (mulberry32): a failing game can be played again. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The control server's choice for a view: the index of the legal command the game's bot hook picks (the
 * `seeker`: 1001 Karawane does not end under random play). */
export async function botChoice(view) {
  const response = await fetch(`${CONTROL_URL}/choose`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(view),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()).index;
}

export async function control(path) {
  const response = await fetch(`${CONTROL_URL}${path}`, { method: "POST" });
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

/** Creates a game of `game`, takes its seats: the client, the game's id and the seats' handles. */
export async function startedGame(client, game, title = `node ${game}`) {
  // 1001 Karawane on a seeded desert (no seat's entropy): a random desert's game may take its seekers thousands
  // of commands (README, Bots), this one a few hundred
  const seeded = game === "karawane" ? { seed: (7).toString(16).padStart(64, "0"), unfair: true } : {};
  const created = await client.create({ game, title, seats: SEATS[game], ...seeded });
  const seats = [];
  for (let n = 0; n < SEATS[game]; n++) {
    seats.push(await client.join(created.game_id, { name: `node${n}`, ...(game === "karawane" ? { entropy: "" } : {}) }));
  }
  return { gameId: created.game_id, seats };
}

/** Plays the game through the library until it is over (or `until(version)` says stop): each awaited seat reads
 * its view and sends one of its legal commands (`pick(view)`: its index; default seeded random). A `stale`
 * refusal (another seat moved first) is the only one expected. Returns the spectator's last view. */
export async function playOut(client, gameId, seats, { pick, seed = 1, until, maxCommands = 5000 } = {}) {
  const rng = random(seed);
  pick = pick ?? ((view) => Math.floor(rng() * view.legal.length));
  let known = 0;
  let commands = 0;
  for (;;) {
    const spectator = await client.view(gameId, { minVersion: known });
    if (spectator.status === "over" || (until && until(spectator.version))) return spectator;
    assert.ok(commands < maxCommands, `${spectator.game} not over after ${maxCommands} commands`);
    for (const n of spectator.flow.awaiting) {
      const view = await seats[n].view({ minVersion: known });
      if (view.status !== "playing" || !view.flow.awaiting.includes(n) || view.legal.length === 0) continue;
      const index = await pick(view);
      assert.ok(index >= 0 && index < view.legal.length, `index ${index} of ${view.legal.length}`);
      try {
        const reply = await seats[n].send(view.legal[index], { expectedVersion: view.version });
        assert.equal(reply.status, "accepted");
        known = Math.max(known, reply.version);
        commands++;
      } catch (error) {
        if (!(error instanceof lib.SoukError) || error.code !== "stale") throw error;
      }
    }
  }
}

/** A WebSocket constructor that tests can cut: while `offline`, no connection opens (the constructor throws,
 * as for a network that is down) and `cut()` drops every open socket. */
export function flakyWebSocket() {
  const open = new Set();
  const state = { offline: false, made: 0 };
  class Flaky extends globalThis.WebSocket {
    constructor(url) {
      if (state.offline) throw new Error("the network is down (test)");
      super(url);
      state.made++;
      state.lastUrl = url;
      open.add(this);
      this.addEventListener("close", () => open.delete(this));
    }
  }
  state.WebSocket = Flaky;
  state.cut = () => {
    for (const socket of open) socket.close(4000, "cut by the test"); // not a refusal (44xx): the follow reconnects
    open.clear();
  };
  return state;
}

/** Resolves once `predicate()` holds (polled), else fails after `ms`. */
export async function until(predicate, ms = 20000, what = "a condition") {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${typeof what === "function" ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
