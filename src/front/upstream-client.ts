// The front's only way to the upstream post API: a keep-alive undici Pool, bounded in time and
// in bytes, whose failures come out already classified as SPEC's 502 / 504 problems.
import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { Pool } from 'undici'
import { ProblemError } from '../problems.js'

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
  /** Bodies larger than this are handed over as a stream instead of being read whole. */
  streamAbove?: number
  /** A validator for a conditional request (the upstream answers 304 when it still holds). */
  ifNoneMatch?: string
}

/** GETs on the upstream post API. Rejects only with ProblemError (502 unreachable or too large, 504). */
export interface UpstreamClient {
  get (path: string, options: UpstreamGetOptions): Promise<UpstreamResponse>
  close (): Promise<void>
}

export interface UpstreamClientOptions {
  /** API_URL: an origin with an optional base path. */
  baseUrl: URL
  /** The whole budget of one call, connect to last body byte (UPSTREAM_TIMEOUT_MS). */
  timeoutMs: number
  /** Keep-alive connections to the upstream. */
  connections?: number
}

/** Connecting is quick or not happening: fail it well before the whole budget. */
const CONNECT_TIMEOUT_MS = 2000

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

export function createUpstreamClient ({ baseUrl, timeoutMs, connections = 128 }: UpstreamClientOptions): UpstreamClient {
  const pool = new Pool(baseUrl.origin, {
    connections,
    connect: { timeout: Math.min(CONNECT_TIMEOUT_MS, timeoutMs) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  })
  const basePath = baseUrl.pathname.replace(/\/+$/, '')

  function classify (err: unknown, signal: AbortSignal): ProblemError {
    const code = (err as { code?: unknown } | null)?.code
    if (signal.aborted || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
      return new ProblemError('upstream-timeout', 'The upstream post API did not answer in time.', { cause: err })
    }
    return new ProblemError('upstream-unreachable', 'The upstream post API could not be reached or broke the connection.', { cause: err })
  }

  return {
    async get (path, { requestId, maxBytes, ifNoneMatch, streamAbove = Infinity }) {
      const controller = new AbortController()
      const budget = setTimeout(() => controller.abort(), timeoutMs)
      try {
        const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
        if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
        const response = await pool.request({ method: 'GET', path: basePath + path, headers, signal: controller.signal })
        const declared = Number(response.headers['content-length'])
        if (declared > maxBytes) {
          response.body.destroy()
          throw tooLarge(maxBytes)
        }
        const body = response.body as AsyncIterable<Buffer> & { destroy: () => void }
        const iterator = body[Symbol.asyncIterator]()
        const chunks: Buffer[] = []
        let size = 0
        for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
          size += next.value.length
          if (size > maxBytes) {
            body.destroy()
            throw tooLarge(maxBytes)
          }
          chunks.push(next.value)
          if (size > streamAbove) {
            clearTimeout(budget)
            return { status: response.statusCode, headers: response.headers, body: Buffer.alloc(0), stream: streamRest(chunks, iterator, size, maxBytes) }
          }
        }
        return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, size) }
      } catch (err) {
        throw err instanceof ProblemError ? err : classify(err, controller.signal)
      } finally {
        clearTimeout(budget)
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
