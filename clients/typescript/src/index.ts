// Souk's TypeScript client library (placeholder: the library lands with issue #20).
export type * from "./wire.js";
export const VERSION = "0.1.0";
