// A loopback port for a process a test starts later. A port the kernel hands out for bind(0) comes
// from the ephemeral range that outgoing connections use too, so between the probe and the real
// listen a loopback fetch (this suite's or another's on the machine) could take it: run 29 of issue 31
// failed EADDRINUSE that way. Ports are drawn at random below that range instead, and each is
// probed; only another process choosing the same port in the same moment can still collide.
import { randomInt } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

const LOWEST = 10_000

/** The first port of the kernel's ephemeral range (Linux default 32768). */
const ephemeralStart = (): number => {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
    return Number.isInteger(first) && first > LOWEST + 1_000 ? first : 32_768
  } catch {
    return 32_768
  }
}

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = createServer()
    srv.once("error", () => resolve(false))
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)))
  })

/** A free loopback port below the ephemeral range, probed by binding it. */
export const freePort = async (): Promise<number> => {
  const top = ephemeralStart()
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(LOWEST, top)
    if (await bindable(port)) return port
  }
  throw new Error(`no free loopback port in ${LOWEST}..${top - 1} after 100 tries`)
}
