// A TCP proxy in front of the service, so a test can drop every connection the way a
// network or a restarting server does, and refuse new ones for a while.
import { createServer, type Server, type Socket, connect } from "node:net"

export interface DropProxy {
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: number
  /** Destroys every open connection (both sides). */
  dropAll(): void
  /** While refusing, new connections are destroyed at once. */
  refuse(on: boolean): void
  close(): Promise<void>
}

export const startDropProxy = async (targetPort: number): Promise<DropProxy> => {
  const pairs = new Set<[Socket, Socket]>()
  let refusing = false
  let accepted = 0
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy()
    accepted++
    const upstream = connect(targetPort, "127.0.0.1")
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on("error", end).on("close", end)
    upstream.on("error", end).on("close", end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("proxy did not bind")
  return {
    port: address.port,
    get accepted() {
      return accepted
    },
    dropAll: () => {
      for (const [a, b] of [...pairs]) {
        a.destroy()
        b.destroy()
      }
      pairs.clear()
    },
    refuse: (on) => void (refusing = on),
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) {
          a.destroy()
          b.destroy()
        }
        server.close(() => resolve())
      })
  }
}
