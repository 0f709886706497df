export const boards = {};
