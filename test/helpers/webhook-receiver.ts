// A webhook receiver on loopback: records each delivery (headers and body), answers the statuses a
// test asks for (then 204), and lets a test wait for the next delivery instead of sleeping.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export interface Delivery { headers: IncomingHttpHeaders, body: string }

export interface Receiver {
  url: string
  deliveries: Delivery[]
  /** Answers the next requests with these statuses, then 204. */
  failNext: (...statuses: number[]) => void
  /** The next request. */
  next: () => Promise<Delivery>
}

export async function startReceiver (t: TestContext): Promise<Receiver> {
  const deliveries: Delivery[] = []
  const waiting: Array<(delivery: Delivery) => void> = []
  const failures: number[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      deliveries.push(delivery)
      res.writeHead(failures.shift() ?? 204).end()
      waiting.shift()?.(delivery)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    failNext: (...statuses) => failures.push(...statuses),
    next: async () => await new Promise((resolve) => waiting.push(resolve))
  }
}
