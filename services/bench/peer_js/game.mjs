// The peer's game for `souk bench peer`: the most minimal 4-player game boardgame.io can run. One move, `tick`,
// adds one to a counter; every turn is one move (`maxMoves: 1` ends it), so the seats move in turn 0, 1, 2, 3, 0...
// The match ends after MOVES moves (a new one is created then, as Souk's games end and new ones start: the match's
// log, which boardgame.io's storage and each client grow by one entry per move, does not grow without end).
//
// `client: false`: the move runs on the server only, so a client's state changes when the server's update
// arrives (what Souk's seats get: the view pushed after the command is on disk); boardgame.io's optimistic update
// on the client would otherwise show the move before the server has it.

export function makeGame(moves) {
  return {
    name: 'bench',
    minPlayers: 4,
    maxPlayers: 4,
    setup: () => ({ count: 0 }),
    turn: { minMoves: 1, maxMoves: 1 },
    moves: {
      tick: {
        move: ({ G }) => {
          G.count += 1;
        },
        client: false,
      },
    },
    endIf: ({ G }) => (G.count >= moves ? { done: true } : undefined),
  };
}
