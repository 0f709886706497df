import { serverClock } from "./client.js";
import { formatSeconds, h, replace } from "./dom.js";
import { boards } from "./boards/registry.js";
import { describeCommand, genericBoard } from "./generic.js";
import { messageOf } from "./lobby.js";
import { forgetSeat, heldSeat, holdSeat, lastName } from "./seats.js";
const FINAL = ["over", "cancelled"];
const CONNECTION_TEXT = {
    connecting: "Connecting to the table…",
    open: "Live",
    down: "Disconnected from the server: reconnecting…",
    closed: "Not following the game.",
};
export function tablePage(root, client, gameId, query) {
    let seat = null;
    let follow = null;
    let live = null; // the newest view
    let past = null; // the view at `at` while travelling
    let at = null;
    let alive = true;
    // the action on its way and the version of the view it was decided on: one action a view (a double click sends
    // once), but a newer view may come before that action's answer (the push and the answer race) and is played on
    let sending = null;
    let entries = [];
    let historyAfter = 0;
    let historyLoading = false;
    let historyAgain = false;
    let historyGeneration = 0; // a new audience (a seat taken) starts the history again
    let historyBehind = 0;
    let record = null;
    let verdict = null;
    let travelToken = 0;
    let confirming = null; // the act asked for, waiting for its confirmation
    let autoplay = null; // the replay's next step, while playing
    let playing = false;
    let speed = 700; // ms a version while the replay plays
    const invite = query.get("invite");
    const el = {
        table: h("div", { id: "table", "data-game-id": gameId, "data-version": 0, "data-seat": "spectator" }),
        header: h("header", { class: "top table-top" }),
        connection: h("div", { id: "connection", "data-status": "connecting", role: "status" }),
        message: h("p", { id: "message", class: "error", role: "alert" }),
        join: h("section", { id: "join", "aria-label": "Join this game" }),
        seats: h("section", { id: "seats", "aria-labelledby": "seats-title" }),
        result: h("section", { id: "result-slot" }),
        undo: h("section", { id: "undo", "aria-label": "Undo" }),
        acts: h("section", { id: "seat-actions", "aria-label": "Leave, resign or fork" }),
        travel: h("section", { id: "travel", "aria-labelledby": "travel-title" }),
        boardTitle: h("h2", { id: "board-title" }),
        board: h("div", { id: "board", tabindex: -1 }),
        history: h("section", { id: "history", "aria-labelledby": "history-title" }),
        record: h("section", { id: "record", "aria-label": "The game's record" }),
    };
    el.table.append(el.header, el.connection, el.message, h("div", { class: "table-grid" }, h("div", { class: "table-main" }, el.join, el.result, el.boardTitle, el.board, el.undo, el.acts), h("aside", { class: "table-side" }, el.seats, el.travel, el.history, el.record)));
    replace(root, el.table);
    showConnection("connecting");
    const ticker = setInterval(tickClocks, 250);
    function shown() {
        return at !== null && past ? past : live;
    }
    function names(view) {
        return view.seats.map((s) => s.name ?? `Seat ${s.seat}`);
    }
    function showConnection(status, detail) {
        el.connection.dataset.status = status;
        el.connection.className = `connection connection-${status}`;
        el.connection.textContent = status === "closed" && detail ? `Not following the game: ${detail}`
            : CONNECTION_TEXT[status];
    }
    function say(text) {
        el.message.textContent = text;
    }
    // ---- following ------------------------------------------------------------------------------------------
    function start() {
        follow?.close();
        const held = heldSeat(gameId);
        seat = held ? client.seat(gameId, held.seat, held.token) : null;
        entries = [];
        historyAfter = 0;
        historyGeneration++;
        const handlers = {
            onView: (view) => received(view),
            onHistory: (page) => addHistory(page.entries),
            onStatus: (status, detail) => {
                if (!alive)
                    return;
                showConnection(status, detail);
                if (status === "closed" && detail && seat && /token/.test(detail)) {
                    // the stored token no longer holds (the seat was given back): follow as a spectator
                    forgetSeat(gameId);
                    say(`Your seat's token was refused (${detail}): you are watching.`);
                    start();
                }
            },
        };
        // JSON Patch frames after the first whole view (the library applies them): a push carries what changed
        follow = seat ? seat.follow(handlers, { patches: true }) : client.follow(gameId, handlers, { patches: true });
        void loadHistory();
    }
    /** Stops following as the seat and lets a history read under way end (then reads are the spectator's). */
    async function quiet() {
        follow?.close();
        follow = null;
        seat = null;
        historyGeneration++;
        while (historyLoading)
            await new Promise((done) => setTimeout(done, 20));
    }
    function received(view) {
        if (!alive)
            return;
        const fresh = !live || view.version > live.version;
        live = view;
        if (fresh && view.clock && view.clock.at)
            serverClock.passed(view.clock.at);
        if (fresh && view.status === "over" && !record)
            void loadRecord();
        render();
        if (fresh)
            void loadHistory();
    }
    // ---- time travel ----------------------------------------------------------------------------------------
    async function travel(to) {
        at = to;
        const token = ++travelToken;
        if (to === null) {
            past = null;
            render();
            return;
        }
        try {
            const view = seat ? await seat.view({ at: to }) : await client.view(gameId, { at: to });
            if (!alive || token !== travelToken)
                return;
            past = view;
            say("");
        }
        catch (error) {
            if (!alive || token !== travelToken)
                return;
            say(messageOf(error));
            pause();
        }
        render();
        if (playing)
            stepLater();
    }
    // ---- the replay's autoplay (after the end) ----------------------------------------------------------------
    /** Plays the replay from the version shown (from the first when at the end): a version every `speed` ms, each
     * shown before the next is asked, up to the end. */
    function playReplay() {
        if (!live || !FINAL.includes(live.status))
            return;
        playing = true;
        if (at === null || at >= live.version)
            go(1); // travel() then steps on
        else
            stepLater();
        drawTravel();
    }
    function pause() {
        playing = false;
        if (autoplay !== null)
            clearTimeout(autoplay);
        autoplay = null;
    }
    function stepLater() {
        if (autoplay !== null)
            clearTimeout(autoplay);
        autoplay = setTimeout(() => {
            autoplay = null;
            if (!alive || !playing || !live)
                return;
            const next = (at ?? live.version) + 1;
            if (next >= live.version) {
                pause();
                go(null); // the end: the live table, the result
            }
            else {
                go(next);
            }
        }, speed);
    }
    function manual(to) {
        pause();
        go(to);
    }
    function go(to) {
        const next = to === null ? `#/games/${gameId}` : `#/games/${gameId}?at=${to}`;
        if (location.hash !== next)
            location.hash = next; // the router calls travel()
        else
            void travel(to);
    }
    // ---- history --------------------------------------------------------------------------------------------
    /** Reads the history after the newest entry held, page by page. One read at a time: a call meanwhile asks for
     * another after it; a history behind the live view (its projection lags the view's) is read again shortly. */
    async function loadHistory() {
        if (historyLoading) {
            historyAgain = true;
            return;
        }
        historyLoading = true;
        const generation = historyGeneration;
        try {
            for (;;) {
                const page = seat ? await seat.history({ after: historyAfter, limit: 500 })
                    : await client.history(gameId, { after: historyAfter, limit: 500 });
                if (!alive)
                    return;
                if (generation !== historyGeneration)
                    break; // read for the audience before: read again below
                addHistory(page.entries);
                if (page.entries.length < 500)
                    break;
            }
        }
        catch (error) {
            if (alive && generation === historyGeneration)
                say(`The history could not be read: ${messageOf(error)}`);
        }
        finally {
            historyLoading = false;
        }
        if (!alive)
            return;
        const behind = live !== null && historyAfter < live.version;
        if (historyAgain || generation !== historyGeneration) {
            historyAgain = false;
            void loadHistory();
        }
        else if (behind && historyBehind++ < 20) {
            setTimeout(() => void loadHistory(), 250);
        }
        else if (!behind) {
            historyBehind = 0;
        }
    }
    function addHistory(page) {
        const known = new Map(entries.map((e) => [e.seq, e]));
        for (const entry of page)
            known.set(entry.seq, entry); // an undo flags older entries: keep the newest read
        entries = [...known.values()].sort((a, b) => a.seq - b.seq);
        if (entries.length)
            historyAfter = Math.max(historyAfter, entries[entries.length - 1].seq);
        drawHistory();
    }
    // ---- actions --------------------------------------------------------------------------------------------
    async function act(what) {
        const version = live?.version ?? -1;
        if (sending !== null && sending.version >= version)
            return;
        const mine = { version };
        sending = mine;
        el.table.setAttribute("aria-busy", "true");
        say("");
        try {
            await what();
        }
        catch (error) {
            if (alive)
                say(`Refused: ${messageOf(error)}`);
        }
        finally {
            if (sending === mine) {
                sending = null;
                el.table.removeAttribute("aria-busy");
            }
        }
    }
    function play(index) {
        const view = live;
        if (!seat || !view || at !== null)
            return;
        const command = view.legal[index];
        if (command === undefined)
            return;
        const mine = seat;
        void act(() => mine.send(command, { expectedVersion: view.version }));
    }
    async function join(seatNumber) {
        const input = el.join.querySelector("input[name=player-name]");
        const name = input?.value.trim() ?? "";
        if (!name) {
            say("Type your name first.");
            input?.focus();
            return;
        }
        await act(async () => {
            const joined = await client.join(gameId, { name, seat: seatNumber, ...(invite ? { invite } : {}) });
            holdSeat(gameId, { seat: joined.seat, token: joined.token, name });
            if (alive)
                start();
        });
    }
    async function loadRecord() {
        try {
            const text = await client.recordText(gameId);
            if (!alive)
                return;
            record = { text, url: URL.createObjectURL(new Blob([text], { type: "application/json" })) };
            drawRecord();
        }
        catch (error) {
            if (alive)
                replace(el.record, h("p", { class: "error" }, `No record: ${messageOf(error)}`));
        }
    }
    // ---- drawing --------------------------------------------------------------------------------------------
    function render() {
        const view = shown();
        if (!view || !alive)
            return;
        el.table.dataset.version = String(view.version);
        el.table.dataset.seat = view.seat === null ? "spectator" : String(view.seat);
        el.table.dataset.status = view.status;
        if (at !== null)
            el.table.dataset.at = String(at);
        else
            delete el.table.dataset.at;
        if (live)
            el.table.dataset.live = String(live.version);
        drawHeader(view);
        drawJoin();
        drawSeats(view);
        drawResult(view);
        drawBoard(view);
        drawUndo(view);
        drawActs(view);
        drawTravel();
        drawRecord();
        tickClocks();
    }
    function drawHeader(view) {
        document.title = `${view.title} · Souk`;
        const who = view.seat === null ? "Watching" : `You are ${names(view)[view.seat]} (seat ${view.seat})`;
        replace(el.header, h("nav", {}, h("a", { href: "#/", id: "to-lobby" }, "← Lobby")), h("h1", {}, view.title), h("p", { class: "meta" }, `${boardFor(view).title || view.game} · ${view.status} · version ${view.version}`, view.unfair ? " · unfair (seeded)" : "", " · ", who, view.flow.phase ? ` · phase ${view.flow.phase}` : "", view.flow.round ? ` · round ${view.flow.round}` : ""));
    }
    function drawJoin() {
        const view = live;
        const free = view && view.status === "open" ? view.seats.filter((s) => s.name === null) : [];
        if (!free.length) {
            replace(el.join);
            el.join.hidden = true;
            return;
        }
        el.join.hidden = false;
        const existing = el.join.querySelector("input[name=player-name]");
        const name = existing ? existing.value : lastName();
        const strategy = h("select", { id: "bot-strategy", name: "bot-strategy" }, h("option", { value: "" }, "the server's choice"), ["random", "greedy", "mcts", "seeker"].map((s) => h("option", { value: s }, s)));
        const bots = h("div", { class: "bots" }, h("button", { type: "button", id: "fill-bots", onclick: () => void act(async () => {
                const options = strategy.value ? { strategy: strategy.value } : {};
                if (invite)
                    options.invite = invite; // a private game's bots need its invitation
                await client.fillBots(gameId, options);
            }) }, "Fill the free seats with bots"), h("label", { for: "bot-strategy" }, "playing"), strategy);
        if (seat) {
            replace(el.join, h("h2", {}, "Waiting for players"), h("p", {}, `${free.length} seat${free.length > 1 ? "s are" : " is"} free: share this page's address, or`), bots);
            return;
        }
        replace(el.join, h("h2", {}, "Take a seat"), h("div", { class: "field" }, h("label", { for: "player-name" }, "Your name"), h("input", { id: "player-name", name: "player-name", value: name, maxlength: 60, autocomplete: "nickname" })), h("div", { class: "join-buttons" }, free.map((s) => h("button", { type: "button", "data-join-seat": s.seat, class: "primary",
            onclick: () => void join(s.seat) }, `Take seat ${s.seat}`))), bots);
    }
    function drawSeats(view) {
        const awaiting = new Set(view.flow.awaiting ?? []);
        const presence = new Map((view.presence ?? []).map((p) => [p.seat, p]));
        const clocks = new Map((view.clock?.seats ?? []).map((c) => [c.seat, c]));
        const n = names(view);
        replace(el.seats, h("h2", { id: "seats-title" }, "Seats"), h("ul", { class: "seat-list" }, view.seats.map((s) => {
            const p = presence.get(s.seat);
            const c = clocks.get(s.seat);
            const flags = [];
            if (s.seat === view.seat)
                flags.push(h("span", { class: "tag you" }, "you"));
            if (awaiting.has(s.seat) && !FINAL.includes(view.status)) {
                flags.push(h("span", { class: "tag awaited" }, "to play"));
            }
            if (s.bot)
                flags.push(h("span", { class: "tag bot" }, `bot (${s.bot})`));
            else if (c?.bot)
                flags.push(h("span", { class: "tag bot" }, "a bot plays"));
            if (c?.absent)
                flags.push(h("span", { class: "tag" }, "absent"));
            if (c?.out)
                flags.push(h("span", { class: "tag" }, `out: ${c.out}`));
            const winner = view.result?.winners.includes(s.seat);
            return h("li", { class: `seat-row${awaiting.has(s.seat) ? " awaited" : ""}`, "data-seat-row": s.seat,
                "data-awaited": String(awaiting.has(s.seat)) }, h("span", { class: `presence ${p?.connected ? "on" : "off"}`, role: "img",
                "aria-label": p ? (p.connected ? "connected" : "away") : "presence unknown",
                title: p ? (p.connected ? "connected" : "away") : "" }), h("span", { class: "seat-name" }, s.name ?? "free seat", winner ? " ★" : ""), flags, clockOf(c, view));
        })));
    }
    function clockOf(c, view) {
        if (!c || !view.clock?.options)
            return null;
        const reserve = c.reserve ? ` + ${formatSeconds(c.reserve)}` : "";
        if (c.deadline === null || c.deadline === undefined || FINAL.includes(view.status)) {
            return h("span", { class: "clock idle" }, c.reserve ? `reserve ${formatSeconds(c.reserve)}` : "");
        }
        return h("span", { class: "clock running", "data-deadline": c.deadline, role: "timer",
            "aria-label": "time left" }, formatSeconds(c.deadline - serverClock.now()), reserve);
    }
    function tickClocks() {
        for (const clock of el.seats.querySelectorAll(".clock[data-deadline]")) {
            const left = Number(clock.dataset.deadline) - serverClock.now();
            const text = clock.firstChild;
            if (text)
                text.textContent = formatSeconds(left);
            clock.classList.toggle("low", left < 10);
        }
    }
    function drawResult(view) {
        if (!FINAL.includes(view.status)) {
            replace(el.result);
            return;
        }
        const n = names(view);
        const result = view.result;
        replace(el.result, h("div", { id: "result", role: "status" }, h("h2", {}, view.status === "cancelled" ? "Game cancelled" : "Game over"), result ? [
            h("p", { class: "winners" }, result.winners.length
                ? `Won by ${result.winners.map((w) => n[w]).join(" and ")}` : "No winner"),
            h("ol", { class: "scores", start: 0 }, result.scores.map((score, i) => h("li", { "data-score-seat": i }, `${n[i]}: ${score}`))),
        ] : null));
    }
    function boardFor(view) {
        return boards[view.game] ?? genericBoard;
    }
    function drawBoard(view) {
        const board = boardFor(view);
        const table = at !== null ? { ...view, legal: [] } : view;
        el.boardTitle.textContent = board.title || `${view.game} (generic board)`;
        const active = document.activeElement;
        const hadFocus = active instanceof HTMLElement && el.board.contains(active);
        const key = hadFocus ? active.getAttribute("data-legal") ?? (active.id ? `#${active.id}` : null) : null;
        el.board.replaceChildren();
        const props = { table, names: names(view), play };
        try {
            board.render(el.board, props);
        }
        catch (error) {
            // the board failed on this view: the generic board instead, and the error uncaught (tests see it)
            el.board.replaceChildren();
            genericBoard.render(el.board, props);
            setTimeout(() => { throw error; });
        }
        if (hadFocus) {
            const again = key === null ? null : key.startsWith("#") ? el.board.querySelector(key)
                : el.board.querySelector(`[data-legal="${key}"]`);
            (again ?? el.board.querySelector("[data-legal]") ?? el.board).focus();
        }
    }
    function drawUndo(view) {
        const undo = view.undo;
        if (!undo || at !== null || FINAL.includes(view.status) || view.seat === null) {
            replace(el.undo);
            el.undo.hidden = true;
            return;
        }
        const request = undo.request;
        const n = names(view);
        const parts = [];
        if (request) {
            const accepted = request.accepted ?? [];
            parts.push(h("p", { id: "undo-request" }, `${n[request.seat]} asks to take back the game to version `, `${request.to_version}`, request.asked.length ? ` (asked: ${request.asked.map((s) => n[s]).join(", ")}` +
                (accepted.length ? `; agreed: ${accepted.map((s) => n[s]).join(", ")})` : ")") : ""));
            if (request.seat === view.seat) {
                parts.push(h("button", { type: "button", id: "undo-decline",
                    onclick: () => void act(() => seat.declineUndo()) }, "Withdraw my request"));
            }
            else if (request.asked.includes(view.seat) && !accepted.includes(view.seat)) {
                parts.push(h("div", { class: "undo-answers" }, h("button", { type: "button", id: "undo-accept", class: "primary",
                    onclick: () => void act(() => seat.acceptUndo()) }, "Accept"), h("button", { type: "button", id: "undo-decline",
                    onclick: () => void act(() => seat.declineUndo()) }, "Decline")));
            }
        }
        if (undo.to_versions.length && !request) {
            parts.push(h("div", { class: "undo-offers" }, undo.to_versions.map((v) => h("button", { type: "button", "data-undo": v, "data-key": `undo-${v}`,
                onclick: () => void act(() => seat.undo(v, { expectedVersion: view.version })) }, `Take back to version ${v}`))));
        }
        if (undo.undone.length) {
            const last = undo.undone[undo.undone.length - 1];
            parts.push(h("p", { class: "note" }, `${n[last.by_seat]} took back versions ${last.first} to ${last.last}.`));
        }
        el.undo.hidden = parts.length === 0;
        replace(el.undo, parts.length ? h("h2", {}, `Undo (${undo.policy.replace("_", " ")})`) : null, parts);
    }
    /** The acts a seat (or anyone, for a fork) may ask for now: each button asks first, and only the confirmation
     * sends; a refusal shows in #message. */
    function acts(view) {
        const mine = seat;
        const out = view.clock?.seats.find((c) => c.seat === view.seat)?.out;
        const found = [];
        if (mine && view.seat !== null && at === null && view.status === "open") {
            found.push({ id: "leave", label: "Leave the table",
                question: `Give seat ${view.seat} back? Someone else may take it.`, yes: "Yes, leave",
                run: async () => {
                    await quiet(); // nothing asked with the token while it goes: the server would refuse it (401)
                    try {
                        await mine.leave();
                    }
                    catch (error) {
                        if (alive)
                            start(); // still seated: follow again
                        throw error;
                    }
                    forgetSeat(gameId);
                    if (alive) {
                        say(`You left seat ${view.seat}.`);
                        start();
                    }
                } });
        }
        if (mine && view.seat !== null && at === null && view.status === "playing" && !out) {
            found.push({ id: "resign", label: "Resign",
                question: "Resign for good? Your seat cannot win any more: a bot plays it, or the game ends if you were " +
                    "the last one playing against another.", yes: "Yes, resign",
                run: async () => {
                    await mine.resign();
                    if (alive)
                        say("You resigned.");
                } });
        }
        if (live?.status === "over") {
            const from = at ?? live.version; // the version shown: the end, or the replay's
            found.push({ id: "fork", label: `Fork from version ${from}`,
                question: `Start a new game from the position at version ${from}? Its players join it as a new game.`,
                yes: "Yes, fork",
                run: async () => {
                    pause();
                    const forked = await client.fork(gameId, from, mine ? { token: mine.token } : {});
                    if (alive) {
                        location.hash = `#/games/${forked.game_id}` +
                            (forked.invite_code ? `?invite=${encodeURIComponent(forked.invite_code)}` : "");
                    }
                } });
        }
        return found;
    }
    function drawActs(view) {
        const found = acts(view);
        const asked = found.find((a) => a.id === confirming?.id);
        if (!asked)
            confirming = null;
        el.acts.hidden = found.length === 0;
        if (asked) {
            replace(el.acts, h("div", { id: "confirm", role: "alertdialog", "aria-labelledby": "confirm-question",
                "data-act": asked.id }, h("p", { id: "confirm-question" }, asked.question), h("div", { class: "confirm-buttons" }, h("button", { type: "button", id: "confirm-yes", class: "danger", onclick: () => {
                    confirming = null;
                    void act(asked.run).then(() => { if (alive)
                        render(); });
                } }, asked.yes), h("button", { type: "button", id: "confirm-no", onclick: () => {
                    confirming = null;
                    render();
                    el.acts.querySelector(`#${asked.id}`)?.focus();
                } }, "Cancel"))));
            return;
        }
        replace(el.acts, found.length ? h("div", { class: "act-buttons" }, found.map((a) => h("button", { type: "button", id: a.id, class: a.id === "fork" ? "" : "danger", onclick: () => {
                if (a.id === "fork")
                    pause(); // the position to fork is the one shown: it stays
                confirming = a;
                say("");
                render();
                el.acts.querySelector("#confirm-no")?.focus(); // the safe answer first
            } }, a.label))) : null);
    }
    function drawTravel() {
        if (!live)
            return;
        const max = live.version;
        const over = FINAL.includes(live.status);
        const current = at ?? max;
        const scrubber = h("input", { type: "range", id: "scrubber", min: 1, max, value: current, step: 1,
            "aria-valuetext": `version ${current} of ${max}` });
        scrubber.addEventListener("change", () => manual(Number(scrubber.value) >= max && !over ? null
            : Number(scrubber.value)));
        const step = (to) => manual(Math.min(max, Math.max(1, to)));
        const speeds = [[1500, "slow"], [700, "normal"], [250, "fast"]];
        const player = over ? h("div", { class: "travel-play" }, h("button", { type: "button", id: "travel-play", class: "primary", "data-playing": String(playing),
            "aria-pressed": String(playing), onclick: () => (playing ? pause() : playReplay(), drawTravel()) }, playing ? "❚❚ Pause" : "▶ Play the replay"), h("label", { for: "travel-speed" }, "speed"), h("select", { id: "travel-speed", onchange: (event) => {
                speed = Number(event.target.value);
            } }, speeds.map(([ms, name]) => h("option", { value: ms, selected: ms === speed }, name)))) : null;
        replace(el.travel, h("h2", { id: "travel-title" }, over ? "Replay" : "Time travel"), h("label", { for: "scrubber" }, at === null ? `Version ${max} (live)`
            : `Version ${past?.version ?? at} of ${max}: the table as it was (read only)`), scrubber, h("div", { class: "travel-buttons" }, h("button", { type: "button", id: "travel-first", onclick: () => step(1), disabled: current <= 1 }, "First"), h("button", { type: "button", id: "travel-prev", onclick: () => step(current - 1), disabled: current <= 1 }, "Back"), h("button", { type: "button", id: "travel-next", onclick: () => step(current + 1),
            disabled: at === null || current >= max }, "Forward"), h("button", { type: "button", id: "travel-live", onclick: () => manual(null), disabled: at === null }, over ? "The end" : "Back to live")), player);
    }
    function drawHistory() {
        const n = live ? names(live) : [];
        const items = entries.map((e) => h("li", { class: e.undone ? "undone" : "", "data-seq": e.seq }, h("button", { type: "button", class: "link", "data-key": `seq-${e.seq}`, onclick: () => manual(e.seq),
            "aria-label": `See the table at version ${e.seq}` }, `v${e.seq}`), " ", e.seat !== null && e.seat !== undefined ? h("span", { class: "who" }, n[e.seat] ?? `seat ${e.seat}`) : null, " ", describeCommand(e.event), e.undone ? " (undone)" : ""));
        replace(el.history, h("h2", { id: "history-title" }, "History"), h("ol", { class: "history-list", reversed: true }, items.reverse()));
    }
    function drawRecord() {
        if (!live || !FINAL.includes(live.status) || live.status === "cancelled") {
            replace(el.record);
            return;
        }
        if (!record) {
            replace(el.record, h("p", {}, "Loading the record…"));
            return;
        }
        const current = record;
        const mine = seat;
        const rematch = mine ? h("button", { type: "button", id: "rematch", class: "primary", onclick: () => void act(async () => {
                const next = await mine.rematch(); // this seat in the rematch (the same players, options and seats)
                holdSeat(next.gameId, { seat: next.seat, token: next.token, name: heldSeat(gameId)?.name ?? "" });
                location.hash = `#/games/${next.gameId}`;
            }) }, "Rematch") : null;
        replace(el.record, h("h2", {}, "Record"), rematch, h("a", { id: "record-download", class: "button", href: current.url, download: `${gameId}.souk.json` }, "Download the record"), h("button", { type: "button", id: "record-verify", onclick: () => void act(async () => {
                verdict = await client.verify(current.text);
                drawRecord();
            }) }, "Verify it"), verdict ? h("div", { id: "verdict", "data-ok": String(verdict.ok), role: "status" }, h("p", {}, verdict.ok ? "✔ " : "✘ ", verdict.summary), verdict.problems.length ? h("ul", {}, verdict.problems.map((p) => h("li", {}, p))) : null) : null);
    }
    // ---- start ----------------------------------------------------------------------------------------------
    const firstAt = Number(query.get("at"));
    start();
    if (Number.isInteger(firstAt) && firstAt > 0)
        void travel(firstAt);
    return {
        gameId,
        travel: (to) => void travel(to),
        destroy() {
            alive = false;
            pause();
            clearInterval(ticker);
            follow?.close();
            if (record)
                URL.revokeObjectURL(record.url);
        },
    };
}
