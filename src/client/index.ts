// The typed twinbook client, everything browser-safe (docs/sdk.md). Node-only extras
// (the node:crypto fast signer) are in ./node.ts, which re-exports this too.
export * from "./api-client.ts"
export * from "./errors.ts"
export * from "./feed.ts"
export * from "./keys.ts"
export * from "./public-client.ts"
export type * from "./types.ts"
export { DELEGATION_PREFIX, delegationMessage, orderMessage, sessionMessage, walletLinkMessage, withdrawMessage } from "../auth/messages.ts"
