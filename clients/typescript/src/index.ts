// Souk's TypeScript client library: the HTTP API with request and command ids and resends, live views over a
// WebSocket with reconnection, catch-up and JSON Patch deltas, and the wire format's types (generated).
export type * from "./wire.js";
export { SoukClient, Seat } from "./client.js";
export type { SoukClientOptions, CreateOptions, JoinOptions, RequestOptions, SendOptions, LobbyQuery,
  FillBotsOptions } from "./client.js";
export { SoukError, RETRIED_CODES, type KnownErrorCode } from "./errors.js";
export { Transport, randomId, type FetchLike, type TransportOptions } from "./transport.js";
export { Follower, type Follow, type FollowHandlers, type FollowOptions, type FollowStatus,
  type WebSocketLike } from "./follow.js";
export { applyPatch, parsePointer, PatchError, type PatchOperation } from "./patch.js";
export const VERSION = "0.1.0";
