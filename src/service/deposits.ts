// Deposit records inside the exchange: what the chain watcher has seen, journaled
// as service commands so that every stage survives restarts and replays exactly.
// Crediting is exactly once per (tx hash, log index); a reorg before crediting
// un-detects; funds that cannot credit end in `error` with the reason and are
// held for the operator (see depositProblem), so nothing is silently lost.

export type DepositStage = "idle" | "detected" | "bridging" | "confirming" | "credited" | "error"

export interface DepositRecord {
  /** `<txHash>:<logIndex>`: the exactly-once key. */
  readonly key: string
  readonly wallet: string
  readonly address: string
  readonly token: string
  readonly amountMicro: number
  readonly txHash: string
  readonly blockNumber: number
  readonly blockHash: string
  stage: DepositStage
  error: string | null
  seenAtSec: number
  updatedAtSec: number
  creditedAtSec: number | null
  /** The user credited, once credited. */
  user: string | null
  /** Confirmed on chain (swept into the vault afterwards); credits as soon as the wallet is linked. */
  confirmed: boolean
}

export interface DepositRules {
  readonly token: string
  readonly minMicro: number
  readonly maxPerTxMicro: number
}

/**
 * Why a detected transfer cannot credit, or null when it can. Another token is never swept: it
 * stays at the deposit address. Out-of-range USDG is not credited; it stays at the address until a
 * later valid deposit's sweep (which moves the forwarder's whole balance) carries it into the
 * vault. Either way the record keeps the amount and the reason for an operator refund.
 */
export const depositProblem = (d: { token: string; amountMicro: number }, rules: DepositRules): string | null => {
  if (d.token !== rules.token) return `wrong token ${d.token}: only USDG (${rules.token}) credits; not credited, the funds stay at the deposit address`
  const held = "not credited; held for an operator refund (at the deposit address, or in the vault once a later deposit is swept)"
  if (d.amountMicro < rules.minMicro) return `amount ${d.amountMicro} below the minimum ${rules.minMicro} micro; ${held}`
  if (d.amountMicro > rules.maxPerTxMicro) return `amount ${d.amountMicro} above the per-transfer maximum ${rules.maxPerTxMicro} micro; ${held}`
  return null
}

export class DepositBook {
  readonly byKey = new Map<string, DepositRecord>()
  private readonly byWallet = new Map<string, DepositRecord[]>()
  /** Records by transaction: a transfer re-included after a deep reorg is known by its tx. */
  private readonly byTx = new Map<string, DepositRecord[]>()

  add(record: DepositRecord): void {
    this.byKey.set(record.key, record)
    const list = this.byWallet.get(record.wallet)
    if (list === undefined) this.byWallet.set(record.wallet, [record])
    else list.push(record)
    const ofTx = this.byTx.get(record.txHash)
    if (ofTx === undefined) this.byTx.set(record.txHash, [record])
    else ofTx.push(record)
  }

  remove(key: string): void {
    const record = this.byKey.get(key)
    if (record === undefined) return
    this.byKey.delete(key)
    const list = this.byWallet.get(record.wallet)!
    list.splice(list.indexOf(record), 1)
    const ofTx = this.byTx.get(record.txHash)!
    ofTx.splice(ofTx.indexOf(record), 1)
    if (ofTx.length === 0) this.byTx.delete(record.txHash)
  }

  /** Records of transaction `txHash` (every log of it that was seen). */
  ofTx(txHash: string): ReadonlyArray<DepositRecord> {
    return this.byTx.get(txHash) ?? []
  }

  ofWallet(wallet: string): ReadonlyArray<DepositRecord> {
    return this.byWallet.get(wallet) ?? []
  }

  /** Detected or confirming deposits: the watcher's work list. */
  open(): DepositRecord[] {
    return [...this.byKey.values()].filter((d) => d.stage === "detected" || d.stage === "confirming")
  }
}
