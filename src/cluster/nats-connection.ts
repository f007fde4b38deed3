// The one way twinbook connects to NATS (docs/cluster.md): NATS_URL is a comma-separated list of
// the cluster's nodes, so losing any one of them leaves the connection somewhere to go. The
// client reconnects for ever (a sequencer or gateway without NATS cannot work anyway; giving up
// would only turn an outage into a crash), and pings often enough that a silent node — a
// partition, a SIGSTOPped server, where no socket closes — is noticed in seconds, not the
// client's default two minutes.
import { connect, type NatsConnection } from "@nats-io/transport-node"

/** How often the client pings the server it is connected to. */
export const PING_INTERVAL_MS = 2_000
/** Unanswered pings after which the connection counts as dead and the client moves on. */
export const MAX_PINGS_OUT = 3

/** "nats://a:4222, nats://b:4222" → the servers, in order, blanks dropped. */
export const natsServers = (urls: string): string[] =>
  urls
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "")

export const connectNats = (urls: string, name = "twinbook"): Promise<NatsConnection> => {
  const servers = natsServers(urls)
  if (servers.length === 0) return Promise.reject(new Error("NATS_URL names no server"))
  return connect({
    servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    // A node that is down at start-up is not a reason to refuse: the next in the list is tried.
    waitOnFirstConnect: true
  })
}
