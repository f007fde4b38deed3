// A deliberately broken log client for testing the auditor: every append a sequencer makes —
// its term marker and its journal's batches — goes without the expected position, as a
// JetStream publish without the expected-last-sequence header would. The log then takes any
// append after whatever is there, so fencing is gone: a zombie's held batch lands after the new
// leader's marker (a batch of an older term past the fence, two records under one sequence
// number, a leader whose state is not the log's). The auditor must catch it and name the seed.
import type { ReplicatedLog } from "../../src/cluster/ports.ts"
import type { SimLogClient } from "../world/cluster-log.ts"

export const noExpectedPosition = (log: SimLogClient): ReplicatedLog => ({
  ...log,
  append: (batch) => log.appendUnchecked(batch)
})

/** Planted log bugs the CLI can switch on by name (`--plant`), to reproduce a failing test run. */
export const LOG_PLANTS: Record<string, (log: SimLogClient) => ReplicatedLog> = { "no-expected-position": noExpectedPosition }
