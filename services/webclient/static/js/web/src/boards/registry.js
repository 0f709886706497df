import { board as yspahan } from "./yspahan.js";
export const boards = {
    yspahan,
};
