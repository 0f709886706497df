// Each game's board by the game's name in the catalog (`yspahan`, `samarkand`, `istanbul`, `karawane`); a game
// with no board here is drawn by the generic board (its legal commands as buttons, its view as a tree).
import { board as istanbul } from "./istanbul.js";
import { board as karawane } from "./karawane.js";
import { board as samarkand } from "./samarkand.js";
import { board as yspahan } from "./yspahan.js";
export const boards = {
    istanbul,
    karawane,
    samarkand,
    yspahan,
};
