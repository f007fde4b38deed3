// What the page reads from `/config.json` (served by web/server.ts): every address it talks to.
// One declaration for the server that writes it and the page that reads it.

export interface WebConfig {
  readonly api_url: string
  readonly ws_url: string
  readonly deposit_url: string | null
  /** The deposit chain's RPC for a browser-held development wallet; null when no faucet. */
  readonly chain_rpc_url: string | null
  readonly chain_id: number | null
  readonly token_address: string | null
  /** True when the API's `POST /v1/dev/faucet` mints (embedded chain and DEV_CREDIT): the deposit page offers it. */
  readonly faucet: boolean
}
