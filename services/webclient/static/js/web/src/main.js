// The reference web client: a page per route of the URL's hash. `#/` the lobby; `#/games/{id}` a game's table
// (`?at=V`: as it was at version V; `?invite=CODE`: a private game's invitation). See clients/web/README.md.
import { makeClient } from "./client.js";
import { lobbyPage } from "./lobby.js";
import { tablePage } from "./table.js";
const client = makeClient();
const app = document.getElementById("app");
let page = null;
function route() {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path, search = ""] = hash.split("?", 2);
    const query = new URLSearchParams(search);
    const game = /^\/games\/([^/]+)\/?$/.exec(path);
    if (game && page && "gameId" in page && page.gameId === decodeURIComponent(game[1])) {
        const at = Number(query.get("at"));
        page.travel(Number.isInteger(at) && at > 0 ? at : null);
        return;
    }
    page?.destroy();
    document.title = "Souk";
    page = game ? tablePage(app, client, decodeURIComponent(game[1]), query) : lobbyPage(app, client, query);
    app.focus({ preventScroll: true });
}
window.addEventListener("hashchange", route);
route();
