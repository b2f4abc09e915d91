// watch(): the front's live stream of changes (`GET /api/changes` with `Accept:
// text/event-stream`) as an async iterable that outlives connections. A connection that fails,
// ends or stays silent past three heartbeats is opened again after a growing, jittered pause,
// sending the last event's id as `Last-Event-ID`, so that the front resumes without a gap; when it
// no longer knows that state it says so (`expired`), and the stream goes on from its head.
import { createEventStreamReader } from './event-stream.js'
import { BlogApiProblem, problemOf } from './problem.js'

/** A change: the slugs whose post was added or changed, and those removed (fetch the posts with sync()). */
export interface WatchChange {
  type: 'change'
  since: string
  until: string
  upserted: string[]
  deleted: string[]
}

/** The state watched from is not known to the front (any more): sync the copy again from scratch (sync() does, by itself). */
export interface WatchExpired {
  type: 'expired'
}

export type WatchEvent = WatchChange | WatchExpired

export interface WatchOptions {
  /** The state held (a copy's token): the first event is the change since then. Without it, changes from now on. */
  since?: string | undefined
  /** Ends the iteration (as `break` does). */
  signal?: AbortSignal | undefined
  /** The first pause before reconnecting, doubled after each failure up to `maxRetryMs` (1,000 by default, or the stream's `retry:`). */
  retryMs?: number | undefined
  /** The longest pause between two attempts (30,000 by default). */
  maxRetryMs?: number | undefined
  /** Silence after which the connection is taken for dead and opened again (45,000 by default: three heartbeats). */
  silenceMs?: number | undefined
  /** Told of each failed or ended connection; the watch goes on trying. */
  onError?: ((err: unknown) => void) | undefined
}

/** Statuses worth trying again: the front or an upstream briefly unable to answer. */
const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504])

const isChange = (value: unknown): value is Omit<WatchChange, 'type'> => {
  const change = value as Partial<WatchChange> | null
  return typeof change?.since === 'string' && typeof change.until === 'string' &&
    Array.isArray(change.upserted) && change.upserted.every((slug) => typeof slug === 'string') &&
    Array.isArray(change.deleted) && change.deleted.every((slug) => typeof slug === 'string')
}

/** Resolves after `ms`, or at once when `signal` aborts. */
async function pause (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done (): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })
}

export async function * watchChanges (fetchImpl: typeof fetch, url: URL, options: WatchOptions = {}): AsyncGenerator<WatchEvent, void, undefined> {
  const { since, signal, maxRetryMs = 30_000, silenceMs = 45_000, onError } = options
  // Stops everything: the caller's signal, or the iteration's end (`break`, `return`).
  const stop = new AbortController()
  const onAbort = (): void => { stop.abort() }
  signal?.addEventListener('abort', onAbort)
  if (signal?.aborted === true) stop.abort()
  let lastEventId = since
  let firstRetryMs = options.retryMs ?? 1000
  let retryMs = firstRetryMs
  try {
    while (!stop.signal.aborted) {
      const connection = new AbortController()
      const abortConnection = (): void => { connection.abort() }
      stop.signal.addEventListener('abort', abortConnection)
      let silence: ReturnType<typeof setTimeout> | undefined
      /** Counts silence while waiting on the front (not while the caller handles an event). */
      const listen = (): void => { silence = setTimeout(abortConnection, silenceMs) }
      let wait: number | undefined
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' }
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
        listen()
        const response = await fetchImpl(url, { headers, signal: connection.signal })
        clearTimeout(silence)
        if (response.status === 410 && lastEventId !== undefined) {
          // A front that refuses the state at once, rather than with a sync-expired event.
          await response.body?.cancel()
          lastEventId = undefined
          yield { type: 'expired' }
          continue
        }
        if (!response.ok) {
          const problem = new BlogApiProblem(await problemOf(response), response.headers.get('retry-after') ?? undefined)
          if (!TRANSIENT.has(response.status)) throw problem
          const seconds = Number(problem.retryAfter)
          if (Number.isFinite(seconds) && seconds >= 0) wait = seconds * 1000
          throw problem
        }
        if (!/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
          throw new TypeError(`The change stream answered ${response.headers.get('content-type') ?? 'no content type'}, not text/event-stream.`)
        }
        retryMs = firstRetryMs
        const reader = createEventStreamReader(lastEventId)
        const decoder = new TextDecoder()
        const body = response.body.getReader()
        while (true) {
          listen()
          const { done, value } = await body.read()
          clearTimeout(silence)
          if (done) throw new Error('The change stream ended.')
          for (const event of reader.push(decoder.decode(value, { stream: true }))) {
            if (event.type === 'sync-expired') {
              lastEventId = event.lastEventId
              yield { type: 'expired' }
            } else if (event.type === 'message') {
              const change: unknown = JSON.parse(event.data)
              if (!isChange(change)) throw new TypeError('A change event is not { since, until, upserted, deleted }.')
              lastEventId = event.lastEventId
              yield { type: 'change', since: change.since, until: change.until, upserted: change.upserted, deleted: change.deleted }
            }
          }
          // An `id:` alone (the position a stream opened without a token starts from) moves the resume point too.
          if (reader.lastEventId !== '') lastEventId = reader.lastEventId
          if (reader.retryMs !== undefined && options.retryMs === undefined) firstRetryMs = reader.retryMs
        }
      } catch (err) {
        if (stop.signal.aborted) return
        if (err instanceof BlogApiProblem && !TRANSIENT.has(err.status)) throw err
        onError?.(err)
      } finally {
        clearTimeout(silence)
        stop.signal.removeEventListener('abort', abortConnection)
        connection.abort()
      }
      // Jittered (between half and all of the pause), so that many clients do not come back at once.
      await pause(wait ?? retryMs * (0.5 + Math.random() / 2), stop.signal)
      retryMs = Math.min(retryMs * 2, maxRetryMs)
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    stop.abort()
  }
}
