// The front's only way to the upstream post API: GETs through an undici Dispatcher (a keep-alive
// Pool in production; a MockAgent in tests), bounded in time and in bytes, whose failures come out
// already classified as SPEC's 502 / 504 problems. A GET broken before any answer (the keep-alive
// race) is retried once on a fresh connection, within a retry budget; an upstream known to be
// down is failed fast by a circuit breaker.
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, Pool, type Dispatcher } from 'undici'
import type { UpstreamTimeouts } from '../config.js'
import { ProblemError } from '../problems.js'
import { resumedStream } from '../resumed-stream.js'
import { BREAKER_OPEN_PERIODS, createCircuitBreaker } from './circuit-breaker.js'

export interface UpstreamResponse {
  status: number
  headers: IncomingHttpHeaders
  /** The whole body, read within the byte limit; empty when `stream` is set. */
  body: Buffer
  /**
   * Set when the body passed `streamAbove`: the rest of it, starting with the bytes already
   * read. It errors if the upstream breaks off or exceeds `maxBytes`; the whole-call budget no
   * longer applies (only the idle time-out between chunks).
   */
  stream?: Readable
}

export interface UpstreamGetOptions {
  /** Passed on as `X-Request-Id`, so both tiers log the same id. */
  requestId: string
  /** A larger body is a 502 (or, once streaming, an error of the stream). */
  maxBytes: number
  /**
   * Bodies declared larger than this are handed over as a stream instead of being read whole;
   * so are bodies of unknown length past min(this, 1 MiB). Undefined: always read whole.
   */
  streamAbove?: number
  /** A validator for a conditional request (the upstream answers 304 when it still holds). */
  ifNoneMatch?: string
}

/** GETs on the upstream post API. Rejects only with ProblemError (502 unreachable or bad, 504). */
export interface UpstreamClient {
  get (path: string, options: UpstreamGetOptions): Promise<UpstreamResponse>
}

/** How calls reach the upstream. Whoever makes the dispatchers closes them. */
export interface UpstreamTransport {
  /** API_URL: its origin and its base path, put before every upstream path. */
  apiUrl: URL
  /** Where calls go: a keep-alive Pool at API_URL's origin (or a MockAgent). */
  dispatcher: Dispatcher
  /**
   * A new connection for the one retry after a call broke before any answer. Not the pool: its
   * other idle sockets may be as stale as the one that broke (an upstream closing idle sockets
   * closes them together). The client closes it once the retry's body is read or dropped.
   */
  connectFresh: () => Dispatcher
}

export interface UpstreamClientOptions extends UpstreamTransport {
  timeouts: UpstreamTimeouts
  /** Consecutive failures after which calls fail fast for a while (BREAKER_FAILURES; 0: never). */
  breakerFailures: number
}

/** Keep-alive connections the production pool holds to the upstream at most. */
const UPSTREAM_CONNECTIONS = 128
/** Bytes of a body of unknown length read before it is handed over as a stream. */
const UNKNOWN_LENGTH_WINDOW = 1024 * 1024

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
/** A connection that broke before any answer: on a reused socket, the keep-alive race. */
const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])
/** Retries in flight may be at most this share of the calls in flight (Envoy's retry budget)… */
const RETRY_BUDGET_RATIO = 0.2
/** …but a few are always allowed, so a quiet front still recovers from one stale socket. */
const RETRY_BUDGET_MIN = 3

/** The production transport to API_URL: a bounded keep-alive Pool, one-off Clients for retries. */
export function createUpstreamTransport (apiUrl: URL, timeouts: UpstreamTimeouts): UpstreamTransport & { dispatcher: Pool } {
  const connect = { timeout: Math.min(timeouts.connectMs, timeouts.totalMs) }
  return {
    apiUrl,
    dispatcher: new Pool(apiUrl.origin, { connect, connections: UPSTREAM_CONNECTIONS }),
    connectFresh: () => new Client(apiUrl.origin, { connect })
  }
}

export function createUpstreamClient ({ apiUrl, dispatcher, connectFresh, timeouts, breakerFailures }: UpstreamClientOptions): UpstreamClient {
  const origin = apiUrl.origin
  const basePath = apiUrl.pathname.replace(/\/+$/, '')
  // undici's own per-phase time-outs; the connect time-out belongs to the dispatcher.
  const phaseTimeouts = { headersTimeout: Math.min(timeouts.headersMs, timeouts.totalMs), bodyTimeout: timeouts.bodyIdleMs }
  const breaker = createCircuitBreaker({ failures: breakerFailures, ...BREAKER_OPEN_PERIODS })
  let callsInFlight = 0
  let retriesInFlight = 0

  function mayRetry (err: unknown, signal: AbortSignal): boolean {
    const code = codeOf(err)
    return !signal.aborted && code !== undefined && RETRYABLE_CODES.has(code) &&
      retriesInFlight < Math.max(RETRY_BUDGET_MIN, callsInFlight * RETRY_BUDGET_RATIO)
  }

  /** The request, retried once on a fresh connection if the first broke before any answer. */
  async function send (request: Dispatcher.RequestOptions, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    try {
      return await dispatcher.request(request)
    } catch (err) {
      if (!mayRetry(err, signal)) throw err
    }
    retriesInFlight++
    const fresh = connectFresh()
    try {
      // Jittered, so a burst of broken sockets does not come back as one burst.
      await sleep(25 + Math.random() * 225, undefined, { signal })
      const response = await fresh.request(request)
      response.body.once('close', () => { fresh.close().catch(() => {}) })
      return response
    } catch (err) {
      fresh.destroy().catch(() => {})
      throw err
    } finally {
      retriesInFlight--
    }
  }

  async function get (path: string, { requestId, maxBytes, ifNoneMatch, streamAbove }: UpstreamGetOptions): Promise<UpstreamResponse> {
    const budget = startCallBudget(timeouts.totalMs)
    try {
      const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
      if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
      const response = await send({ origin, method: 'GET', path: basePath + path, headers, signal: budget.signal, ...phaseTimeouts }, budget.signal)
      const { statusCode: status, headers: responseHeaders } = response
      const declared = declaredLength(responseHeaders)
      if (declared !== undefined && declared > maxBytes) {
        response.body.destroy()
        throw tooLarge(maxBytes)
      }
      const chunks = bounded(response.body, maxBytes)
      const streamPast = streamThreshold(declared, streamAbove)
      const read: Buffer[] = []
      let size = 0
      for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
        read.push(next.value)
        size += next.value.length
        if (size > streamPast) {
          return { status, headers: responseHeaders, body: Buffer.alloc(0), stream: resumedStream(read, chunks) }
        }
      }
      return { status, headers: responseHeaders, body: Buffer.concat(read, size) }
    } catch (err) {
      throw classify(err, budget.signal.aborted)
    } finally {
      // Also when a stream is handed over: from then on only the idle time-out bounds it.
      budget.release()
    }
  }

  return {
    async get (path, options) {
      breaker.check()
      callsInFlight++
      try {
        const response = await get(path, options)
        breaker.succeeded()
        return response
      } catch (err) {
        // Only "nobody answered" opens the breaker; a wrong answer shows the upstream is there.
        if (err instanceof ProblemError && err.kind !== 'upstream-bad-response') breaker.failed(err)
        else breaker.succeeded()
        throw err
      } finally {
        callsInFlight--
      }
    }
  }
}

/**
 * The whole-call budget: its signal aborts the call after `ms`, unless released first (a body
 * handed over as a stream is then bound only by the idle time-out between chunks).
 */
function startCallBudget (ms: number): { signal: AbortSignal, release: () => void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), ms)
  return { signal: controller.signal, release: () => clearTimeout(timer) }
}

/**
 * Bytes read before a body is handed over as a stream: never without `streamAbove`; at once when
 * its declared length passes it; after a first window when its length is unknown (the post API
 * streams its large lists), so that the first byte is not held back.
 */
function streamThreshold (declared: number | undefined, streamAbove: number | undefined): number {
  if (streamAbove === undefined) return Infinity
  if (declared === undefined) return Math.min(streamAbove, UNKNOWN_LENGTH_WINDOW)
  return declared > streamAbove ? 0 : Infinity
}

function declaredLength (headers: IncomingHttpHeaders): number | undefined {
  const header = headers['content-length']
  return header === undefined ? undefined : Number(header)
}

/** The body's chunks, failing with a 502 problem once more than `maxBytes` came. */
async function * bounded (body: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer, void, undefined> {
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    // Leaving the loop destroys the body: the connection is not read any further.
    if (size > maxBytes) throw tooLarge(maxBytes)
    yield chunk
  }
}

function classify (err: unknown, timedOut: boolean): ProblemError {
  if (err instanceof ProblemError) return err
  const code = codeOf(err)
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ProblemError('upstream-timeout', 'The upstream post API did not answer in time.', { cause: err })
  }
  return new ProblemError('upstream-unreachable', 'The upstream post API could not be reached or broke the connection.', { cause: err })
}

function codeOf (err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

function tooLarge (maxBytes: number): ProblemError {
  return new ProblemError('upstream-bad-response', `The upstream post API sent more than ${maxBytes} bytes.`)
}
