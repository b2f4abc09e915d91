// A webhook receiver on loopback: records each delivery (headers and body), answers what a test
// tells it to (204 by default), and lets a test wait for the next delivery instead of sleeping.
// With `verify`, it is a receiver as the Standard Webhooks specification asks one to be: a
// delivery that fails verification is answered 400, and accepted ones are kept once per id.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { Change } from '../../src/sync/change.js'

/** The WEBHOOK_SECRET of the tests' senders: `whsec_` and base64, as the specification's libraries take it. */
export const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

export interface Delivery { headers: IncomingHttpHeaders, body: string }

/** What the receiver answers: a status, one with Retry-After, or 'hang' (never answers). */
export type Answer = number | 'hang' | { status: number, retryAfter: string }

export interface ReceiverOptions {
  /** Throws when a delivery does not verify (it is answered 400); without it, every delivery passes. */
  verify?: (body: string, headers: IncomingHttpHeaders) => unknown
}

export interface Receiver {
  url: string
  /** Every request, verified or not, in arrival order. */
  deliveries: Delivery[]
  /** Payloads that passed verification and were answered 2xx, once per webhook-id, in arrival order. */
  accepted: Array<{ id: string, payload: { type: string, timestamp: string, data: Change & { cache_tags: string[], paths: string[] } } }>
  /** What it answers from now on. */
  answer: (answer: Answer) => void
  /** Answers the next requests with these statuses, then what `answer` said. */
  failNext: (...statuses: number[]) => void
  /** The next request, at its arrival. */
  next: () => Promise<Delivery>
}

export async function startReceiver (t: TestContext, { verify }: ReceiverOptions = {}): Promise<Receiver> {
  let answer: Answer = 204
  const failures: number[] = []
  const waiting: Array<(delivery: Delivery) => void> = []
  const seen = new Set<string>()
  const receiver: Omit<Receiver, 'url'> = {
    deliveries: [],
    accepted: [],
    answer: (next) => { answer = next },
    failNext: (...statuses) => failures.push(...statuses),
    next: async () => await new Promise((resolve) => waiting.push(resolve))
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      receiver.deliveries.push(delivery)
      for (const arrived of waiting.splice(0)) arrived(delivery)
      const status = failures.shift() ?? answer
      if (status === 'hang') return
      try {
        verify?.(delivery.body, delivery.headers)
      } catch {
        res.writeHead(400).end()
        return
      }
      const id = String(req.headers['webhook-id'])
      if (typeof status === 'number' && status >= 200 && status < 300 && !seen.has(id)) {
        seen.add(id)
        receiver.accepted.push({ id, payload: JSON.parse(delivery.body) })
      }
      if (typeof status === 'object') res.writeHead(status.status, { 'retry-after': status.retryAfter }).end()
      else res.writeHead(status).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => { server.closeAllConnections(); server.close() })
  return { ...receiver, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }
}
