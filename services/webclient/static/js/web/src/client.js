// The page's access to the server: the library (souk-client) with two additions of the page's own.
// - `records`: a record is verified byte for byte as served (README, Records), so the page keeps the text it
//   downloaded and posts that same text to /verify (parsing and serialising it again could change its bytes).
// - `serverClock`: how the page relates the server's clock (a view's clock deadlines are server instants, unix
//   seconds) to the browser's: every answer's Date header gives the offset to within a second (the client's
//   fetch goes through `clockedFetch`), and a view's clock `at` (an instant the server has passed) raises it.
import { SoukClient, SoukError } from "souk-client";
export { SoukClient, Seat, SoukError } from "souk-client";
/** The server's clock minus the browser's, in seconds. */
export const serverClock = {
    offset: 0,
    known: false,
    now() {
        return Date.now() / 1000 + this.offset;
    },
    /** An answer's Date header (whole seconds: the server's instant lies in [date, date + 1 s)), with the local
     * instants the request left and its answer came (ms). */
    fromDate(header, sentAt, receivedAt) {
        const date = header ? Date.parse(header) : Number.NaN;
        if (Number.isNaN(date))
            return;
        const estimate = (date + 500) / 1000 - (sentAt + receivedAt) / 2000;
        if (!this.known || Math.abs(estimate - this.offset) > 1)
            this.offset = estimate;
        this.known = true;
    },
    /** `instant` (server seconds) has passed on the server: its now is at least that. */
    passed(instant) {
        const offset = instant - Date.now() / 1000;
        if (offset > this.offset)
            this.offset = offset;
    },
};
/** fetch, reading each answer's Date header into serverClock. */
export async function clockedFetch(input, init) {
    const sentAt = Date.now();
    const response = await fetch(input, init);
    serverClock.fromDate(response.headers.get("date"), sentAt, Date.now());
    return response;
}
export function makeClient() {
    return new SoukClient({ baseUrl: "", fetch: clockedFetch });
}
export const records = {
    /** A finished game's record as served, byte for byte. */
    async text(client, gameId) {
        return (await client.transport.call("GET", `/games/${encodeURIComponent(gameId)}/record`)).text();
    },
    /** POST /verify of that text as it is. */
    async verify(record) {
        const response = await clockedFetch("/verify", { method: "POST", body: record,
            headers: { "content-type": "application/json" } });
        const body = (await response.json());
        if (!response.ok)
            throw new SoukError(response.status, body.code ?? "http_error", body.message ?? "");
        return body;
    },
};
