// A lean keep-alive HTTP/1.1 client for load generation: pre-serialised
// requests written straight to a socket, responses framed by Content-Length.
// Node's http client costs more CPU per request than the server under test,
// which on two cores would measure the client instead of the server.
import { connect, type Socket } from "node:net"

export interface RawResponse {
  readonly status: number
  readonly body: string
}

export class RawConnection {
  private buf: Buffer = Buffer.alloc(0)
  private waiting: ((r: RawResponse) => void) | null = null

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true)
    socket.on("data", (chunk: Buffer) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
      this.tryParse()
    })
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => resolve(new RawConnection(s)))
      s.once("error", reject)
    })
  }

  /** Builds the bytes of a request once, so the timed loop only writes them. */
  static request(method: string, path: string, body: string, headers: Record<string, string> = {}): Buffer {
    const head = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1", "content-type: application/json", `content-length: ${Buffer.byteLength(body)}`]
    for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`)
    return Buffer.from(`${head.join("\r\n")}\r\n\r\n${body}`)
  }

  send(bytes: Buffer): Promise<RawResponse> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.socket.write(bytes)
    })
  }

  close(): void {
    this.socket.destroy()
  }

  private tryParse(): void {
    const end = this.buf.indexOf("\r\n\r\n")
    if (end < 0 || this.waiting === null) return
    const head = this.buf.subarray(0, end).toString("latin1")
    const status = Number(head.slice(9, 12))
    const m = /content-length:\s*(\d+)/i.exec(head)
    if (m === null) throw new Error("bench raw client: responses must carry content-length")
    const length = Number(m[1])
    if (this.buf.length < end + 4 + length) return
    const body = this.buf.subarray(end + 4, end + 4 + length).toString("utf8")
    this.buf = this.buf.subarray(end + 4 + length)
    const done = this.waiting
    this.waiting = null
    done({ status, body })
  }
}
