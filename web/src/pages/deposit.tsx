// Deposit and withdraw: an EVM wallet (an injected EIP-1193 wallet through viem, or on the
// embedded development chain a wallet kept in this browser), the wallet link, the deposit
// address with its instructions and limits, the development faucet, the deposit's stages live,
// and withdrawals to the linked wallet until they confirm on chain.
import { useEffect, useState } from "preact/hooks"
import type { Address, Hex } from "viem"
import type { DepositAddress, DepositProgress } from "../../../src/client/index.ts"
import { describeError, type ErrorBody } from "../errors.ts"
import { formatTime, formatUsd, parseUsdToMicro } from "../format.ts"
import { balance, portfolioVersion } from "../portfolio-store.ts"
import { apiUrl, client, config, depositUrl, getJson, key, noteSurface, notifyHere } from "../session.ts"
import { useHistory } from "./portfolio.tsx"

const DEV_WALLET = "twinbook.devwallet.v1"

interface EvmWallet {
  readonly address: Address
  readonly kind: "injected" | "dev"
  signMessage(message: string): Promise<Hex>
  transferToken(token: Address, to: Address, amountMicro: bigint): Promise<Hex>
}

interface Eip1193 { request(args: { method: string; params?: unknown[] }): Promise<any> }
const injected = (): Eip1193 | null => ((globalThis as { ethereum?: Eip1193 }).ethereum ?? null)

const erc20 = ["function transfer(address to, uint256 amount) returns (bool)"] as const

/** An injected wallet (MetaMask and the like) through viem's custom transport. */
const connectInjected = async (): Promise<EvmWallet> => {
  const eth = injected()
  if (eth === null) throw new Error("No browser wallet found.")
  const viem = await import("viem")
  const [address] = (await eth.request({ method: "eth_requestAccounts" })) as Address[]
  if (address === undefined) throw new Error("The wallet shared no account.")
  const wallet = viem.createWalletClient({ account: address, transport: viem.custom(eth) })
  return {
    address,
    kind: "injected",
    signMessage: (message) => wallet.signMessage({ account: address, message }),
    transferToken: (token, to, amount) => wallet.writeContract({ account: address, chain: null, address: token, abi: viem.parseAbi(erc20), functionName: "transfer", args: [to, amount] })
  }
}

/** A development wallet kept in this browser (embedded chain only: its key is in localStorage). */
const devWallet = async (rpcUrl: string, chainId: number): Promise<EvmWallet> => {
  const viem = await import("viem")
  const accounts = await import("viem/accounts")
  let pk = localStorage.getItem(DEV_WALLET) as Hex | null
  if (pk === null) {
    pk = accounts.generatePrivateKey()
    localStorage.setItem(DEV_WALLET, pk)
  }
  const account = accounts.privateKeyToAccount(pk)
  const chain = viem.defineChain({ id: chainId, name: "twinbook dev chain", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
  const wallet = viem.createWalletClient({ account, chain, transport: viem.http(rpcUrl) })
  const pub = viem.createPublicClient({ chain, transport: viem.http(rpcUrl) })
  return {
    address: account.address,
    kind: "dev",
    signMessage: (message) => account.signMessage({ message }),
    transferToken: async (token, to, amount) => {
      const hash = await wallet.writeContract({ address: token, abi: viem.parseAbi(erc20), functionName: "transfer", args: [to, amount] })
      await pub.waitForTransactionReceipt({ hash, pollingInterval: 250 })
      return hash
    }
  }
}

type Progress = DepositProgress

const STAGES = ["detected", "confirming", "credited"] as const

/** The deposit's stages, each with its state in text and a mark (✓ done, … next), not by colour alone. */
const Stages = ({ p }: { p: Progress | null }) => {
  const stage = p?.stage ?? "idle"
  const reached = STAGES.indexOf(stage as never)
  return (
    <ol class="stages" aria-label="Deposit progress" data-testid="deposit-stage" data-stage={stage}>
      {STAGES.map((s, i) => (
        <li class={i <= reached ? "done" : ""} data-done={i <= reached}>
          <span aria-hidden="true">{i <= reached ? "✓ " : "○ "}</span>{i + 1}. {s}<span class="sr-only">{i <= reached ? " (done)" : " (not yet)"}</span>
        </li>
      ))}
      {stage === "error" && <li class="bad"><span aria-hidden="true">✕ </span>error: {p?.error}</li>}
      {stage === "idle" && <li class="note">no deposit seen yet</li>}
      {p?.amount_micro !== undefined && <li class="note">{formatUsd(p.amount_micro)} · updated {formatTime(p.updated_at)}</li>}
    </ol>
  )
}

// One piece: a page component: its hooks, then its markup top to bottom in the order a person goes through the stages.
export const DepositPage = () => {
  const k = key.value
  const cfg = config.value!
  const [wallet, setWallet] = useState<EvmWallet | null>(null)
  const [linked, setLinked] = useState<string | null | undefined>(undefined)
  const [addr, setAddr] = useState<DepositAddress | null>(null)
  const [progress, setProgress] = useState<Progress | null>(null)
  const [amount, setAmount] = useState("50")
  const [wAmount, setWAmount] = useState("10")
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const history = useHistory()
  void portfolioVersion.value

  // The linked wallet, if any. GET /v1/wallet/{user} answers 404 until a link, which the browser
  // logs as an error for every new user; the rewards read answers 200 with `wallet` (or null) instead.
  useEffect(() => {
    if (k === null) return
    getJson<{ wallet: string | null }>(apiUrl(`/v1/rewards/me?user=${encodeURIComponent(k.user)}`))
      .then((r) => setLinked(r.wallet))
      .catch(() => setLinked(null))
  }, [k?.user])

  // With a dev chain and no injected wallet, the development wallet is ready at once.
  useEffect(() => {
    if (wallet !== null || injected() !== null || cfg.chain_rpc_url === null || cfg.chain_id === null) return
    void devWallet(cfg.chain_rpc_url, cfg.chain_id).then(setWallet).catch((e: Error) => setError(e.message))
  }, [])

  const evm = wallet?.address.toLowerCase() ?? linked ?? null
  useEffect(() => {
    if (evm === null) return
    getJson<DepositAddress>(depositUrl(`/v1/deposit/native-address/${evm}`)).then(setAddr).catch((e: Error) => setError(e.message))
    let live = true
    const poll = () => getJson<{ data: Progress }>(depositUrl(`/v1/deposit/progress/${evm}`)).then((r) => live && setProgress(r.data)).catch(() => {})
    void poll()
    const h = setInterval(poll, 1000)
    return () => {
      live = false
      clearInterval(h)
    }
  }, [evm])

  if (k === null) return <section class="narrow"><h1>Deposit</h1><p><a href="#/account">Sign in</a> first: deposits credit your account key.</p></section>

  const step = async (label: string, f: (notify: ReturnType<typeof notifyHere>) => Promise<void>) => {
    const notify = notifyHere()
    setBusy(label)
    setError(null)
    try {
      await f(notify)
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    } finally {
      setBusy(null)
    }
  }

  const link = () => step("link", async (notify) => {
    if (wallet === null) throw new Error("Connect a wallet first.")
    const w = wallet.address.toLowerCase()
    // Both keys sign the same four lines: the user key here, the EVM wallet via personal_sign.
    const res = await client.value!.linkWallet(w, (message) => wallet.signMessage(message))
    if (res.status !== 200) throw new Error(describeError(res.status, res.body as ErrorBody))
    setLinked(w)
    notify("ok", "Wallet linked: deposits from it credit this account, withdrawals go only to it.")
  })

  const faucetAndSend = () => step("faucet", async (notify) => {
    if (wallet === null || addr === null) throw new Error("Connect and link a wallet first.")
    const micro = parseUsdToMicro(amount)
    if (micro === null || micro < addr.min_usdg_micro || micro > addr.max_usdc_per_tx_micro) {
      throw new Error(`Amount must be between ${formatUsd(addr.min_usdg_micro)} and ${formatUsd(addr.max_usdc_per_tx_micro)}.`)
    }
    // The API's faucet, with this user's session cookie: it mints the amount and tops up gas.
    const res = await client.value!.faucet(wallet.address, micro)
    if (res.status !== 200) throw new Error(describeError(res.status, res.body as ErrorBody))
    await wallet.transferToken(addr.token_address as Address, addr.address as Address, BigInt(micro))
    notify("ok", `Sent ${formatUsd(micro)} test USDG to your deposit address; watch it credit below.`)
  })

  const send = () => step("send", async (notify) => {
    if (wallet === null || addr === null) throw new Error("Connect a wallet first.")
    const micro = parseUsdToMicro(amount)
    if (micro === null) throw new Error("Enter an amount, e.g. 25 or 25.50.")
    await wallet.transferToken(addr.token_address as Address, addr.address as Address, BigInt(micro))
    notify("ok", "Transfer sent.")
  })

  const withdraw = () => step("withdraw", async (notify) => {
    const micro = parseUsdToMicro(wAmount)
    if (micro === null || micro <= 0) throw new Error("Enter a positive amount.")
    if (linked === null || linked === undefined) throw new Error("Link a wallet first: withdrawals go only to it.")
    // Signed with the user key over the linked wallet; the client's nonce is time-based.
    const res = await client.value!.withdraw(micro, { wallet: linked })
    noteSurface(res.status, res.body)
    if (res.status !== 200) throw new Error(describeError(res.status, res.body as ErrorBody))
    notify("ok", `Withdrawal of ${formatUsd(micro)} to ${linked} is pending; it confirms on chain by itself.`)
  })

  return (
    <section>
      <h1>Deposit & withdraw</h1>
      <p class="lead" data-testid="currency-note">Amounts here are in dollars, as is your balance. On the chain you deposit and withdraw <b>USDG</b>, the deposit chain's dollar token: 1 USDG credits $1.00, and a $1.00 withdrawal pays 1 USDG.</p>
      <div class="two">
        <div class="card">
          <h2>1. Wallet</h2>
          {wallet === null ? (
            <div class="row">
              {injected() !== null && <button class="btn primary" onClick={() => step("connect", async () => setWallet(await connectInjected()))} data-testid="connect-injected">Connect browser wallet</button>}
              {cfg.chain_rpc_url !== null && cfg.chain_id !== null && <button class="btn" onClick={() => step("dev", async () => setWallet(await devWallet(cfg.chain_rpc_url!, cfg.chain_id!)))}>Use development wallet</button>}
              {injected() === null && cfg.chain_rpc_url === null && <p class="muted">Install an EVM wallet (e.g. MetaMask) to deposit from it.</p>}
            </div>
          ) : (
            <p>
              {wallet.kind === "dev" ? "Development wallet (kept in this browser, embedded chain only)" : "Browser wallet"}: <code data-testid="evm-wallet">{wallet.address}</code>
            </p>
          )}
          <p>
            Linked wallet:{" "}
            {linked === undefined ? "…" : linked === null ? <span class="muted">none</span> : <code data-testid="linked-wallet">{linked}</code>}
          </p>
          {linked === null && wallet !== null && (
            <button class="btn primary" disabled={busy !== null} onClick={link} data-testid="link-wallet">Link this wallet to my account</button>
          )}
          {linked !== null && linked !== undefined && wallet !== null && linked !== wallet.address.toLowerCase() && (
            <p class="error">This account is linked to {linked}; deposits from another wallet are not credited to it.</p>
          )}
        </div>
        <div class="card">
          <h2>2. Deposit address</h2>
          {addr === null ? <p class="muted">Connect a wallet to see your deposit address.</p> : (
            <>
              <code class="wrap big" data-testid="deposit-address">{addr.address}</code>
              <p class="small">{addr.instructions}</p>
              <div class="kv small">
                <span>Token</span><span>{addr.token} <code>{addr.token_address}</code></span>
                <span>Network</span><span>{addr.chain} (chain id {addr.chain_id ?? "—"})</span>
                <span>Minimum</span><span>{formatUsd(addr.min_usdg_micro)}</span>
                <span>Maximum per transfer</span><span>{formatUsd(addr.max_usdc_per_tx_micro)}</span>
              </div>
              <p class="muted small">Only USDG on chain {addr.chain_id ?? 4663} credits. Below the minimum or above the maximum ends in an error, uncredited.</p>
            </>
          )}
        </div>
      </div>
      <div class="card">
        <h2>3. Send</h2>
        <div class="row">
          <label class="inline">Amount ($)<input value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} data-testid="deposit-amount" /></label>
          {cfg.faucet && wallet?.kind === "dev" && (
            <button class="btn primary" disabled={busy !== null || addr === null || linked === null} onClick={faucetAndSend} data-testid="faucet">
              {busy === "faucet" ? "Minting and sending…" : "Get test USDG and deposit it"}
            </button>
          )}
          {wallet !== null && <button class="btn" disabled={busy !== null || addr === null} onClick={send} data-testid="send-from-wallet">Send from wallet</button>}
        </div>
        {cfg.faucet && <p class="muted small">Development faucet: mints test USDG to your wallet on the embedded chain, then your wallet sends it to the deposit address.</p>}
        <Stages p={progress} />
        <p>Balance available: <b data-testid="deposit-balance">{balance.value === null ? "…" : formatUsd(balance.value.available)}</b></p>
      </div>
      <div class="card">
        <h2>Withdraw</h2>
        <p class="small">Withdrawals go only to the linked wallet{linked ? <> (<code>{linked}</code>)</> : ""}, signed with your key.</p>
        <div class="row">
          <label class="inline">Amount ($)<input value={wAmount} onInput={(e) => setWAmount((e.target as HTMLInputElement).value)} data-testid="withdraw-amount" /></label>
          <button class="btn" disabled={busy !== null || !linked} onClick={withdraw} data-testid="withdraw">Withdraw</button>
        </div>
        {history !== null && history.withdrawals.length > 0 && (
          <table data-testid="withdrawals">
            <thead><tr><th>Created</th><th>Amount</th><th>Status</th><th>Transaction</th></tr></thead>
            <tbody>
              {history.withdrawals.map((w) => (
                <tr><td>{formatTime(w.created_at)}</td><td>{formatUsd(w.amount_micro)}</td><td data-testid="withdrawal-status">{w.status}</td><td><code class="small">{w.tx_signature === null ? "—" : `${w.tx_signature.slice(0, 12)}…`}</code></td></tr>
              ))}
            </tbody>
          </table>
        )}
        <WithdrawWatcher active={history?.withdrawals.some((w) => w.status !== "confirmed" && w.status !== "refunded") ?? false} />
      </div>
      {busy !== null && <p class="muted">Working: {busy}…</p>}
      {error !== null && <p class="error" data-testid="deposit-error">{error}</p>}
    </section>
  )
}

/** Re-reads the history every 2 s while a withdrawal is still on its way (payouts are not on the user channel). */
const WithdrawWatcher = ({ active }: { active: boolean }) => {
  useEffect(() => {
    if (!active) return
    const h = setInterval(() => portfolioVersion.value++, 2000)
    return () => clearInterval(h)
  }, [active])
  return null
}
