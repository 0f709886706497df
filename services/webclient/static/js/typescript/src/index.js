export { SoukClient, Seat } from "./client.js";
export { SoukError, RETRIED_CODES } from "./errors.js";
export { Transport, randomId } from "./transport.js";
export { Follower } from "./follow.js";
export { applyPatch, parsePointer, PatchError } from "./patch.js";
export const VERSION = "0.1.0";
