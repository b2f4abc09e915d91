// The front's only way to the upstream post API: a keep-alive undici Pool, bounded in time and
// in bytes, whose failures come out already classified as SPEC's 502 / 504 problems. A GET
// broken before any answer (the keep-alive race) is retried once on a fresh connection, within
// a retry budget; an upstream known to be down is failed fast by a circuit breaker.
import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, Pool, type Dispatcher } from 'undici'
import { ProblemError } from '../problems.js'
import { createCircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js'

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
   * so are bodies of unknown length past min(this, 1 MiB).
   */
  streamAbove?: number
  /** A validator for a conditional request (the upstream answers 304 when it still holds). */
  ifNoneMatch?: string
}

/** GETs on the upstream post API. Rejects only with ProblemError (502 unreachable or bad, 504). */
export interface UpstreamClient {
  get (path: string, options: UpstreamGetOptions): Promise<UpstreamResponse>
  close (): Promise<void>
}

export interface UpstreamTimeouts {
  /** The whole budget of one call, retry included, until the body is read (UPSTREAM_TIMEOUT_MS). */
  totalMs: number
  /** Establishing a TCP connection. */
  connectMs: number
  /** From sending the request to the end of the response headers. */
  headersMs: number
  /** Longest silence between two body chunks. */
  bodyIdleMs: number
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { totalMs: 10_000, connectMs: 2000, headersMs: 5000, bodyIdleMs: 5000 }

export interface UpstreamClientOptions {
  /** API_URL: an origin with an optional base path. */
  baseUrl: URL
  timeouts?: Partial<UpstreamTimeouts>
  /** Keep-alive connections to the upstream. */
  connections?: number
  breaker?: Partial<CircuitBreakerOptions>
}

/** Bytes of a body of unknown length read before it is handed over as a stream. */
const UNKNOWN_LENGTH_WINDOW = 1024 * 1024

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
/** A connection that broke before any answer: on a reused socket, the keep-alive race. */
const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])
/** Retries in flight may be at most this share of the calls in flight (Envoy's retry budget)… */
const RETRY_BUDGET_RATIO = 0.2
/** …but a few are always allowed, so a quiet front still recovers from one stale socket. */
const RETRY_BUDGET_MIN = 3

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

export function createUpstreamClient ({ baseUrl, timeouts = {}, connections = 128, breaker: breakerOptions }: UpstreamClientOptions): UpstreamClient {
  const budget = { ...DEFAULT_UPSTREAM_TIMEOUTS, ...timeouts }
  const clientOptions = {
    connect: { timeout: Math.min(budget.connectMs, budget.totalMs) },
    headersTimeout: Math.min(budget.headersMs, budget.totalMs),
    bodyTimeout: budget.bodyIdleMs
  }
  const pool = new Pool(baseUrl.origin, { ...clientOptions, connections })
  const basePath = baseUrl.pathname.replace(/\/+$/, '')
  const breaker = createCircuitBreaker(breakerOptions)
  let callsInFlight = 0
  let retriesInFlight = 0

  function classify (err: unknown, timedOut: boolean): ProblemError {
    if (err instanceof ProblemError) return err
    const code = codeOf(err)
    if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
      return new ProblemError('upstream-timeout', 'The upstream post API did not answer in time.', { cause: err })
    }
    return new ProblemError('upstream-unreachable', 'The upstream post API could not be reached or broke the connection.', { cause: err })
  }

  /** The request, retried once on a fresh connection if the first broke before any answer. */
  async function send (request: Dispatcher.RequestOptions, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    try {
      return await pool.request(request)
    } catch (err) {
      const code = codeOf(err)
      if (signal.aborted || code === undefined || !RETRYABLE_CODES.has(code)) throw err
      if (retriesInFlight >= Math.max(RETRY_BUDGET_MIN, callsInFlight * RETRY_BUDGET_RATIO)) throw err
      retriesInFlight++
      const fresh = new Client(baseUrl.origin, clientOptions)
      try {
        // Jittered, so a burst of broken sockets does not come back as one burst.
        await sleep(25 + Math.random() * 225, undefined, { signal })
        const response = await fresh.request(request)
        // The fresh connection closes once this body is read (or dropped).
        response.body.once('close', () => { fresh.close().catch(() => {}) })
        return response
      } catch (retryErr) {
        fresh.destroy().catch(() => {})
        throw retryErr
      } finally {
        retriesInFlight--
      }
    }
  }

  async function get (path: string, { requestId, maxBytes, ifNoneMatch, streamAbove = Infinity }: UpstreamGetOptions): Promise<UpstreamResponse> {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), budget.totalMs)
    try {
      const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
      if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
      const response = await send({ method: 'GET', path: basePath + path, headers, signal: controller.signal }, controller.signal)
      const declared = response.headers['content-length'] === undefined ? undefined : Number(response.headers['content-length'])
      if (declared !== undefined && declared > maxBytes) {
        response.body.destroy()
        throw tooLarge(maxBytes)
      }
      const body = response.body as AsyncIterable<Buffer> & { destroy: () => void }
      const iterator = body[Symbol.asyncIterator]()
      // A declared length decides at once; a body of unknown length (the post API streams its
      // large lists) is streamed past a first window, so its first byte is not held back.
      const streamPast = streamAbove === Infinity ? Infinity : declared === undefined ? Math.min(streamAbove, UNKNOWN_LENGTH_WINDOW) : declared > streamAbove ? 0 : Infinity
      const chunks: Buffer[] = []
      let size = 0
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
        size += next.value.length
        if (size > maxBytes) {
          body.destroy()
          throw tooLarge(maxBytes)
        }
        chunks.push(next.value)
        if (size > streamPast) {
          clearTimeout(timer)
          return { status: response.statusCode, headers: response.headers, body: Buffer.alloc(0), stream: streamRest(chunks, iterator, size, maxBytes) }
        }
      }
      return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, size) }
    } catch (err) {
      throw classify(err, controller.signal.aborted)
    } finally {
      clearTimeout(timer)
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
    },
    async close () {
      await pool.close()
    }
  }
}

function streamRest (read: Buffer[], rest: AsyncIterator<Buffer>, size: number, maxBytes: number): Readable {
  return Readable.from((async function * () {
    try {
      yield * read
      for (let next = await rest.next(); next.done !== true; next = await rest.next()) {
        size += next.value.length
        if (size > maxBytes) throw tooLarge(maxBytes)
        yield next.value
      }
    } finally {
      // The client went away or the limit was crossed: release the upstream connection now.
      await rest.return?.()
    }
  })(), { objectMode: false })
}

function tooLarge (maxBytes: number): ProblemError {
  return new ProblemError('upstream-bad-response', `The upstream post API sent more than ${maxBytes} bytes.`)
}
