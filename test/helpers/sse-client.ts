// A client of an event stream over real HTTP: undici for the request, the sync parser for the
// events (its own tests check it against the standard), and a way to wait for the event a test
// expects instead of sleeping.
import type { IncomingHttpHeaders } from 'node:http'
import { request } from 'undici'
import { createEventStreamParser, type ParsedEvent } from '../../src/sync/sse-parser.js'

export interface StreamClient {
  status: number
  headers: IncomingHttpHeaders
  events: ParsedEvent[]
  /** Every byte received, as text. */
  raw: () => string
  /** Resolves with the first event (already received or to come) that `matches`. */
  waitFor: (matches: (event: ParsedEvent) => boolean) => Promise<ParsedEvent>
  /** Resolves once the server ended the stream. */
  ended: Promise<void>
  close: () => void
}

export async function openStreamClient (url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  const controller = new AbortController()
  const response = await request(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal })
  const events: ParsedEvent[] = []
  const chunks: Buffer[] = []
  const waiters: Array<{ matches: (event: ParsedEvent) => boolean, resolve: (event: ParsedEvent) => void }> = []
  const parser = createEventStreamParser((event) => {
    events.push(event)
    for (const waiter of [...waiters]) {
      if (!waiter.matches(event)) continue
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(event)
    }
  })
  const ended = (async () => {
    try {
      for await (const chunk of response.body) {
        chunks.push(chunk as Buffer)
        parser.push(chunk as Buffer)
      }
    } catch {}
  })()
  return {
    status: response.statusCode,
    headers: response.headers as IncomingHttpHeaders,
    events,
    raw: () => Buffer.concat(chunks).toString('utf8'),
    waitFor: (matches) => {
      const found = events.find(matches)
      return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ matches, resolve }))
    },
    ended,
    close: () => controller.abort()
  }
}
