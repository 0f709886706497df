// boardgame.io's own clients for `souk bench peer`: MATCHES matches played at once, every seat its own Client
// (boardgame.io/client) over its own socket.io connection (boardgame.io/multiplayer's SocketIO, WebSocket
// transport). A seat moves as soon as its state says it may (the state's currentPlayer is this seat); a match that
// ends is replaced by a new one (created and joined through the Lobby API, as a frontend does).
//
//   node clients.mjs URL MATCHES MOVES_PER_MATCH
// Prints `ready` once every match is joined and every seat synced, then reads one line from stdin, `START END`
// (seconds of CLOCK_MONOTONIC, the clock of Python's time.monotonic(): process.hrtime is libuv's uv_hrtime),
// plays until END and prints one JSON line: the latencies (seconds, from the move sent to the mover's state
// having it) of the moves whose new state arrived in [START, END), the stalls and the errors.
import { createRequire } from 'node:module';
import readline from 'node:readline';
import { makeGame } from './game.mjs';
import { printAndExit } from './output.mjs';

// boardgame.io 0.50 ships CommonJS entry points in folders (boardgame.io/client/package.json): require finds them
const require = createRequire(import.meta.url);
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');

const [url, matchesText, movesText] = process.argv.slice(2);
const matches = Number(matchesText);
const moves = Number(movesText || 100);
const game = makeGame(moves);
const SEATS = 4;
const STALL_S = 10;

const now = () => Number(process.hrtime.bigint()) / 1e9;
let start = Infinity;
let end = Infinity;
let playing = false;
const latencies = [];
const errors = [];
let stalls = 0;
let finished = 0;

async function lobby(path, body) {
  const answer = await fetch(`${url}/games/${game.name}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!answer.ok) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
}

class Seat {
  constructor(match, playerID, credentials) {
    this.match = match;
    this.playerID = playerID;
    this.moved = -1; // the _stateID this seat last moved at
    this.pending = null; // [stateID it moved at, when it sent the move]
    this.client = Client({
      game,
      numPlayers: SEATS,
      matchID: match.matchID,
      playerID,
      credentials,
      debug: false,
      multiplayer: SocketIO({ server: url, socketOpts: { transports: ['websocket'] } }),
    });
    this.synced = new Promise((resolve) => {
      this.client.subscribe((state) => {
        if (state === null) return;
        resolve();
        this.seen(state);
      });
    });
    this.client.start();
  }

  seen(state) {
    const arrival = now();
    if (this.pending !== null && state._stateID > this.pending[0]) {
      if (arrival >= start && arrival < end) latencies.push(arrival - this.pending[1]);
      this.pending = null;
    }
    if (state.ctx.gameover !== undefined) {
      this.match.over(this);
      return;
    }
    if (playing && arrival < end && state.ctx.currentPlayer === this.playerID && state._stateID > this.moved
        && this.pending === null) {
      this.moved = state._stateID;
      // after the update's dispatch has returned (a move dispatched from inside a subscriber would nest in it)
      queueMicrotask(() => {
        this.pending = [state._stateID, now()];
        this.client.moves.tick();
      });
    }
  }

  poke() {
    // the state as it is now: the first move of a match, or after a stall
    const state = this.client.getState();
    if (state !== null) this.seen(state);
  }

  stop() {
    this.client.stop();
  }
}

class Match {
  static async create() {
    const { matchID } = await lobby('/create', { numPlayers: SEATS });
    const match = new Match(matchID);
    const joined = [];
    for (let s = 0; s < SEATS; s++) {
      joined.push(await lobby(`/${matchID}/join`, { playerID: String(s), playerName: `p${s}` }));
    }
    match.seats = joined.map((j, s) => new Seat(match, String(s), j.playerCredentials));
    await Promise.all(match.seats.map((seat) => seat.synced));
    return match;
  }

  constructor(matchID) {
    this.matchID = matchID;
    this.seats = [];
    this.ended = new Set();
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  over(seat) {
    this.ended.add(seat.playerID);
    if (this.ended.size === SEATS) this.resolve();
  }

  async watch() {
    // a seat whose move got no new state for STALL_S: counted, and the seats look at their state again
    while (true) {
      const result = await Promise.race([this.done.then(() => 'over'),
        new Promise((r) => setTimeout(() => r('tick'), 1000))]);
      if (result === 'over' || now() >= end) return result;
      for (const seat of this.seats) {
        if (seat.pending !== null && now() - seat.pending[1] > STALL_S) {
          stalls += 1;
          seat.pending = null;
          seat.moved = -1;
          seat.poke();
        }
      }
    }
  }

  stop() {
    for (const seat of this.seats) seat.stop();
  }
}

async function keepPlaying(match) {
  while (true) {
    for (const seat of match.seats) seat.poke();
    const result = await match.watch();
    match.stop();
    if (result === 'over') finished += 1;
    if (now() >= end) return;
    match = await Match.create();
  }
}

try {
  const first = [];
  for (let i = 0; i < matches; i++) first.push(await Match.create());
  process.stdout.write('ready\n');
  const line = await new Promise((resolve) => {
    readline.createInterface({ input: process.stdin }).once('line', resolve);
  });
  [start, end] = line.trim().split(/\s+/).map(Number);
  playing = true;
  const results = await Promise.allSettled(first.map(keepPlaying));
  for (const r of results) if (r.status === 'rejected') errors.push(String(r.reason));
} catch (exc) {
  errors.push(String(exc && exc.stack ? exc.stack : exc));
}
const figures = { latencies: latencies.map((s) => Math.round(s * 1e6) / 1e6), stalls, matches_finished: finished,
  errors: errors.slice(0, 5) };
printAndExit(figures);
