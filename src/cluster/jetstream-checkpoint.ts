// The chain guard's checkpoint (src/chain/guard.ts) in cluster mode: a JetStream KV key, replicated
// like the journal, so a new leader carries on from the newest final block the old one vouched for
// instead of re-anchoring on the newest credited deposit (docs/cluster.md "The chain side").
// Without it, a reorg during a failover of blocks above the newest credited deposit — holding, say,
// a payout the ledger already counts as confirmed — would go unnoticed.
//  - The value names the term that wrote it. A save reads the key and writes on its revision
//    (compare-and-set), refused when a newer term wrote it: a deposed leader that goes on polling
//    cannot move the checkpoint under its successor (its journal appends are fenced the same way).
//  - `load` is what the key held when the leader took over (read once, before the guard starts).
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import type { NatsConnection } from "@nats-io/transport-node"
import type { CheckpointStore } from "../chain/guard.ts"
import type { Checkpoint } from "../service/chain-guard-port.ts"
import { isWrongLastSequence } from "./jetstream-log.ts"

export const CHECKPOINT_BUCKET = "twinbook_chain"
export const CHECKPOINT_KEY = "checkpoint"

interface Stored {
  readonly block_number: string
  readonly hash: string
  readonly term: number
  readonly holder: string
}

const decode = (data: Uint8Array): Stored | null => {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as Partial<Stored>
    if (typeof v.block_number !== "string" || typeof v.hash !== "string" || !/^0x[0-9a-f]{64}$/.test(v.hash) || typeof v.term !== "number") return null
    return v as Stored
  } catch {
    return null
  }
}

export class CheckpointTaken extends Error {
  readonly _tag = "CheckpointTaken"
  constructor(
    readonly term: number,
    readonly newerTerm: number
  ) {
    super(`the chain checkpoint was written by term ${newerTerm}; term ${term} no longer leads and may not move it`)
  }
}

export interface ChainCheckpoints {
  /** The store of one leadership (`term`, `holder`), loaded with what the key holds now. */
  forTerm(term: number, holder: string): Promise<CheckpointStore>
}

/** Opens (creating when absent) the checkpoint bucket: history 1, file storage, `replicas`, reads from the stream leader. */
export const openJetStreamCheckpoints = async (nc: NatsConnection, options: { readonly replicas?: number; readonly bucket?: string } = {}): Promise<ChainCheckpoints> => {
  const bucket = options.bucket ?? CHECKPOINT_BUCKET
  const js = jetstream(nc)
  const jsm = await jetstreamManager(nc)
  const exists = async (): Promise<boolean> => {
    try {
      await jsm.streams.info(`KV_${bucket}`)
      return true
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return false
      throw err
    }
  }
  const kvm = new Kvm(js)
  if (!(await exists())) {
    // Two sequencers may create it at once: the loser finds it there.
    await kvm.create(bucket, { history: 1, replicas: options.replicas ?? 3, storage: StorageType.File, allow_direct: false }).catch(async (err: unknown) => {
      if (!(await exists())) throw err
    })
  }
  const kv = await kvm.open(bucket, { allow_direct: false })
  return { forTerm: async (term, holder) => termStore(kv, term, holder, await read(kv)) }
}

const read = async (kv: KV): Promise<{ value: Stored | null; revision: number }> => {
  const entry = await kv.get(CHECKPOINT_KEY)
  if (entry === null || entry.operation !== "PUT") return { value: null, revision: entry?.revision ?? 0 }
  const value = decode(entry.value)
  if (value === null) throw new Error(`the chain checkpoint (KV key ${CHECKPOINT_KEY}) is malformed; delete the key to re-anchor on the newest credited deposit`)
  return { value, revision: entry.revision }
}

const termStore = (kv: KV, term: number, holder: string, initial: { value: Stored | null }): CheckpointStore => {
  const loaded: Checkpoint | null = initial.value === null ? null : { blockNumber: BigInt(initial.value.block_number), hash: initial.value.hash as Checkpoint["hash"] }
  return {
    load: () => loaded,
    save: async (c) => {
      const value = new TextEncoder().encode(JSON.stringify({ block_number: c.blockNumber.toString(), hash: c.hash, term, holder } satisfies Stored))
      // A write between our read and our update is refused by the revision: read again and retry.
      for (let attempt = 0; ; attempt++) {
        const now = await read(kv)
        if (now.value !== null && now.value.term > term) throw new CheckpointTaken(term, now.value.term)
        try {
          if (now.revision === 0) await kv.create(CHECKPOINT_KEY, value)
          else await kv.update(CHECKPOINT_KEY, value, now.revision)
          return
        } catch (err) {
          if (!isWrongLastSequence(err) || attempt >= 3) throw err
        }
      }
    }
  }
}
