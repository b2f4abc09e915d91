// A stand-in for the upstream post API on loopback, whose behaviour each test chooses,
// and which counts and records every request that reaches it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export type UpstreamBehaviour = (req: IncomingMessage, res: ServerResponse) => void

export interface FakeUpstream {
  url: URL
  /** Paths requested, in order. */
  requests: IncomingMessage[]
  /** TCP connections accepted so far. */
  connections: () => number
  /** TCP connections open now. */
  openConnections: () => number
  behave: (behaviour: UpstreamBehaviour) => void
  close: () => Promise<void>
}

/** `port`: 0 for any free port, or a given one (an upstream coming back where it was). */
export async function startFakeUpstream (behaviour: UpstreamBehaviour = (_req, res) => json(res, 200, []), port = 0): Promise<FakeUpstream> {
  let current = behaviour
  const requests: IncomingMessage[] = []
  const sockets = new Set<Socket>()
  let accepted = 0
  const server = createServer((req, res) => {
    requests.push(req)
    current(req, res)
  })
  server.on('connection', (socket) => {
    accepted++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const address = server.address() as AddressInfo
  return {
    url: new URL(`http://127.0.0.1:${address.port}`),
    requests,
    connections: () => accepted,
    openConnections: () => sockets.size,
    behave: (next) => { current = next },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export function json (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

// Ports handed out for a process to listen on later lie below Linux's ephemeral range (32768 and
// up by default): a port the kernel picks for listen(0) is in that range, where the next outgoing
// connection of any test running alongside may take it as its local port before the process
// listens. Below it, only another test's pick can collide, one chance in thousands.
const PORTS_FROM = 20_000
const PORTS_TO = 32_767

/** A port on which nothing listens (connection refused), outside the ephemeral range. */
export async function freePort (): Promise<number> {
  for (;;) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM + 1))
    const server = createServer()
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (!listening) continue
    await new Promise<void>((resolve) => server.close(() => resolve()))
    return port
  }
}
