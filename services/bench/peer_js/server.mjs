// boardgame.io's own server for `souk bench peer`: Server() with its default storage (InMemory: FLATFILE_DIR is
// unset), its socket.io transport and its Lobby API, on 127.0.0.1:PORT. Prints `listening PORT` once it serves.
//   node server.mjs PORT MOVES_PER_MATCH
import { createRequire } from 'node:module';
import { makeGame } from './game.mjs';

// boardgame.io 0.50 ships CommonJS entry points in folders (boardgame.io/server/package.json): require finds them
const { Server, Origins } = createRequire(import.meta.url)('boardgame.io/server');

const port = Number(process.argv[2]);
const moves = Number(process.argv[3] || 100);
delete process.env.FLATFILE_DIR; // in memory, as the peer is measured

const server = Server({ games: [makeGame(moves)], origins: [Origins.LOCALHOST, /127\.0\.0\.1:\d+/] });
await server.run({ port, callback: () => console.log(`listening ${port}`) });
