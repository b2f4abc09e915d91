// A webhook receiver as the Standard Webhooks specification asks one to be (verify, refuse stale
// timestamps, drop duplicate ids), for the sender's tests: it answers what a test tells it to.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { Change } from '../../src/sync/change.js'
import { parseWebhookSecret } from '../../src/sync/webhook-signature.js'

export const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
export const KEY = parseWebhookSecret(SECRET)
export const library = new Webhook(SECRET)

export interface Received { headers: IncomingHttpHeaders, body: string }

/** What the receiver answers the next request: a status, or 'hang' (never answers). */
export type Answer = number | 'hang' | { status: number, retryAfter: string }

export interface Receiver {
  url: string
  /** Every request, verified or not. */
  requests: Received[]
  /** Payloads that passed verification, once per webhook-id, in arrival order. */
  accepted: Array<{ id: string, payload: { type: string, timestamp: string, data: Change & { cache_tags: string[], paths: string[] } } }>
  answer: (answer: Answer) => void
  /** Resolves at the next request's arrival. */
  arrival: () => Promise<void>
}

/** A receiver as the specification asks one to be: verify, refuse stale timestamps, drop duplicate ids. */
export async function startReceiver (t: TestContext, verify = (body: string, headers: IncomingHttpHeaders) => library.verify(body, headers as Record<string, string>)): Promise<Receiver> {
  let answer: Answer = 204
  const arrivals: Array<() => void> = []
  const seen = new Set<string>()
  const receiver: Omit<Receiver, 'url'> = {
    requests: [],
    accepted: [],
    answer: (next) => { answer = next },
    arrival: () => new Promise((resolve) => arrivals.push(resolve))
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      receiver.requests.push({ headers: req.headers, body })
      for (const arrived of arrivals.splice(0)) arrived()
      if (answer === 'hang') return
      try {
        verify(body, req.headers)
      } catch {
        res.writeHead(400).end()
        return
      }
      const id = req.headers['webhook-id'] as string
      if (typeof answer === 'number' && answer >= 200 && answer < 300 && !seen.has(id)) {
        seen.add(id)
        receiver.accepted.push({ id, payload: JSON.parse(body) })
      }
      if (typeof answer === 'object') res.writeHead(answer.status, { 'retry-after': answer.retryAfter }).end()
      else res.writeHead(answer).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return { ...receiver, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }
}
