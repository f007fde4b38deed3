// The client for Node: everything of index.ts plus the node:crypto fast signer.
export * from "./index.ts"
export { fastKeyFromSecret } from "./keys-node.ts"
