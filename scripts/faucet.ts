// `npm run faucet -- <0x wallet> <amount>`: asks the running service (API_URL, default
// http://127.0.0.1:8080) to mint `amount` test USDG (e.g. `100`, `2.5`) to the wallet on its
// embedded chain, through `POST /v1/dev/faucet` (docs/api.md "Development faucet"). Through the
// service rather than the chain, so the gate (embedded chain, DEV_CREDIT) is the service's own.
// The route serves registered users only: when it asks for a session (401) the CLI registers a
// fresh key of its own (the minted USDG goes to the wallet, not to that user), so it needs nothing
// from the caller.
// One line on stdout when minted; a clear message on stderr and a non-zero exit otherwise.
import { ApiClient, ApiFailure, generateKey } from "../src/client/index.ts"

const USAGE = "usage: npm run faucet -- <0x wallet> <amount in USDG, e.g. 100 or 2.5>"

/** "2.5" → 2_500_000n: decimal text converted exactly (no floats); null when not a positive amount with ≤ 6 decimals. */
const usdgToMicro = (text: string): bigint | null => {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (m === null) return null
  const micro = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? "").padEnd(6, "0"))
  return micro > 0n ? micro : null
}

const fail = (message: string, code: number): number => {
  process.stderr.write(`faucet: ${message}\n`)
  return code
}

const main = async (args: ReadonlyArray<string>): Promise<number> => {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (args.length !== 2) return fail(USAGE, 2)
  const [wallet, amount] = args as [string, string]
  if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) return fail(`"${wallet}" is not a wallet address (0x followed by 40 hex characters)\n${USAGE}`, 2)
  const micro = usdgToMicro(amount)
  if (micro === null) return fail(`"${amount}" is not an amount of USDG (a positive number with at most 6 decimals, e.g. 100 or 2.5)\n${USAGE}`, 2)
  if (micro > BigInt(Number.MAX_SAFE_INTEGER)) return fail(`${amount} USDG is too much for one request`, 2)
  const api = (process.env["API_URL"] ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
  const client = new ApiClient(api, generateKey())
  const refused = (step: string, res: { status: number; body: unknown }): number => {
    const body = (res.body ?? {}) as { error?: string; detail?: string }
    return fail(`${step}${res.status} ${body.error ?? "error"}${body.detail === undefined ? "" : `: ${body.detail}`}`, 1)
  }
  try {
    // Asked first without a session: a service with no faucet says why (404) and gets no registration.
    let res = await client.faucet(wallet, Number(micro))
    if (res.status === 401) {
      const session = await client.register("faucet-cli")
      if (session.status !== 200) return refused("registering the CLI's key: ", session)
      res = await client.faucet(wallet, Number(micro))
    }
    if (res.status !== 200) return refused("", res)
    process.stdout.write(`minted ${amount} USDG (${micro} micro) to ${res.body.address}: tx ${res.body.tx_hash}\n`)
    return 0
  } catch (err) {
    if (err instanceof ApiFailure) return fail(`the answer from ${api} is not the twinbook API's: ${err.message}`, 1)
    return fail(`cannot reach the service at ${api} (${err instanceof Error ? (err.cause as Error | undefined)?.message ?? err.message : String(err)}); start it with npm start, or set API_URL`, 1)
  }
}

process.exitCode = await main(process.argv.slice(2))
