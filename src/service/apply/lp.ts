// Liquidity provision: LP sessions, delegations and bots (the LP book applies them), and
// the daily rewards pool: its configuration, its once-a-minute sample, its payout.
import type { EngineEvent } from "../../engine/types.ts"
import type { ApplyResult, Exchange } from "../exchange.ts"
import type { CommandOf, Handler } from "./handler.ts"

/** Every LP command kind: the LP book applies them all (typed as a plain function so it fits each kind's slot). */
export const applyLp = (x: Exchange, cmd: CommandOf<"lp_session_new" | "lp_delegate" | "lp_start" | "lp_stop" | "lp_bot_step">, events: EngineEvent[]): ApplyResult => {
  const refused = x.lpBook.apply(cmd, x, events)
  return refused === null ? { events } : { events, refused }
}

export const applySetRewardsConfig: Handler<"set_rewards_config"> = (x, cmd, events) => {
  x.rewards.setConfig(cmd.config, x.tsSec)
  return { events }
}

export const applyRewardsSample: Handler<"rewards_sample"> = (x, _cmd, events) => {
  // One sampling interval of the books as they stand, credited to the journal's day.
  x.rewards.sample(x.tsSec, x.engine)
  return { events }
}

export const applyPayRewards: Handler<"pay_rewards"> = (x, cmd, events) => {
  const paid = x.rewards.pay(cmd.day, x.tsSec, (user, amountMicro, ref) => x.engineApply({ type: "credit", user, amountMicro, ref }, events)[0]?.type === "credited")
  return paid === null ? { events, refused: "not_payable" } : { events, paid }
}
