// Public surface of the pure engine.
export { Engine } from "./engine.ts"
export * from "./types.ts"
export * from "./money.ts"
export { assertInvariants, findViolations } from "./invariants.ts"
export { restoreSnapshot, snapshotHash, stateHash, takeSnapshot, type EngineSnapshot } from "./snapshot.ts"
export type { Account, Market, Order, Position } from "./state.ts"
