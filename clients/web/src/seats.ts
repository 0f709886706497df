// The seats this browser holds, kept in localStorage under `souk.seats` as {gameId: {seat, token, name}}: a reload
// (or a later visit) rejoins the game with the stored token. A token is a seat's secret: it stays in this browser.

export interface HeldSeat {
  seat: number;
  token: string;
  name: string;
}

const KEY = "souk.seats";
const NAME = "souk.name";

export function heldSeats(): Record<string, HeldSeat> {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? "{}") as unknown;
    return stored && typeof stored === "object" ? (stored as Record<string, HeldSeat>) : {};
  } catch {
    return {};
  }
}

export function heldSeat(gameId: string): HeldSeat | null {
  const held = heldSeats()[gameId];
  return held && typeof held.token === "string" && Number.isInteger(held.seat) ? held : null;
}

export function holdSeat(gameId: string, seat: HeldSeat): void {
  localStorage.setItem(KEY, JSON.stringify({ ...heldSeats(), [gameId]: seat }));
  localStorage.setItem(NAME, seat.name);
}

export function forgetSeat(gameId: string): void {
  const seats = heldSeats();
  delete seats[gameId];
  localStorage.setItem(KEY, JSON.stringify(seats));
}

/** The name this browser last joined with (the join form's default). */
export function lastName(): string {
  return localStorage.getItem(NAME) ?? "";
}
