// Notable events, read off the journal as the exchange applies it (so every source counts:
// HTTP, the LP worker, the chain worker): fills are counted, and deposits credited, payouts
// sent, confirmed or refunded and LP bots paused or stopped get a log line each. Attached to the
// live service only; the simulator never calls it.
import type { Exchange } from "../service/exchange.ts"
import type { Logger } from "./log.ts"
import type { ServiceMetrics } from "./metrics.ts"

export const observeExchange = (exchange: Exchange, metrics: ServiceMetrics, log: Logger): void => {
  exchange.onApply((record, result) => {
    for (const ev of result.events) {
      if (ev.type !== "fill") continue
      metrics.fills.inc()
      metrics.fillContracts.inc(ev.size)
    }
    const cmd = record.cmd
    switch (cmd.type) {
      case "deposit_confirmed": {
        const d = exchange.deposits.byKey.get(cmd.key)
        log.info("deposit credited", { seq: record.seq, deposit: cmd.key, wallet: d?.wallet, user: d?.user ?? undefined, amount_micro: d?.amountMicro, stage: d?.stage })
        return
      }
      case "deposit_reorged":
        return log.warn("deposit reorged out", { seq: record.seq, deposit: cmd.key })
      case "withdrawal_sent": {
        const w = exchange.withdrawals.byId.get(cmd.id)
        return log.info("payout sent", { seq: record.seq, withdrawal: cmd.id, tx_hash: cmd.txHash, user: w?.user, amount_micro: w?.amountMicro })
      }
      case "withdrawal_confirmed": {
        const w = exchange.withdrawals.byId.get(cmd.id)
        return log.info("payout confirmed", { seq: record.seq, withdrawal: cmd.id, tx_hash: w?.txHash ?? undefined, user: w?.user, amount_micro: w?.amountMicro })
      }
      case "withdrawal_refunded": {
        const w = exchange.withdrawals.byId.get(cmd.id)
        return log.warn("payout refunded", { seq: record.seq, withdrawal: cmd.id, tx_hash: w?.txHash ?? undefined, user: w?.user, amount_micro: w?.amountMicro, reason: cmd.reason })
      }
      case "lp_bot_step":
        if (cmd.decision === "pause") log.info("bot paused", { seq: record.seq, user: cmd.user, market_id: cmd.marketId })
        else if (cmd.decision === "stop") log.info("bot stopped", { seq: record.seq, user: cmd.user, market_id: cmd.marketId, reason: cmd.stopReason })
        return
      case "lp_stop":
        return log.info("bot stopped", { seq: record.seq, user: cmd.user, reason: cmd.reason })
      case "set_trading":
        return log.info("trading surface", { seq: record.seq, state: cmd.state })
      default:
        return
    }
  })
}
