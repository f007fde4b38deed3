// The shape of one journal command's handler: it applies the command to the exchange,
// appending the engine's events, and says what happened. One per command kind, grouped
// by topic in this folder and listed in `table.ts` (as src/engine splits Engine.apply).
import type { EngineEvent } from "../../engine/types.ts"
import type { ServiceCommand } from "../commands.ts"
import type { ApplyResult, Exchange } from "../exchange.ts"

export type CommandKind = ServiceCommand["type"]
export type CommandOf<K extends CommandKind> = Extract<ServiceCommand, { readonly type: K }>
export type Handler<K extends CommandKind> = (x: Exchange, cmd: CommandOf<K>, events: EngineEvent[]) => ApplyResult
/** Exactly one handler per command kind: a missing or misnamed one is a type error. */
export type HandlerTable = { readonly [K in CommandKind]: Handler<K> }
