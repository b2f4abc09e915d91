// The front's only way to the upstream post API: a keep-alive undici Pool, bounded in time and
// in bytes, whose failures come out already classified as SPEC's 502 / 504 problems.
import type { IncomingHttpHeaders } from 'node:http'
import { Pool } from 'undici'
import { ProblemError } from '../problems.js'

export interface UpstreamResponse {
  status: number
  headers: IncomingHttpHeaders
  /** The whole body, read within the byte limit. */
  body: Buffer
}

export interface UpstreamGetOptions {
  /** Passed on as `X-Request-Id`, so both tiers log the same id. */
  requestId: string
  /** A larger body is a 502: the front never buffers without bound. */
  maxBytes: number
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
    async get (path, { requestId, maxBytes, ifNoneMatch }) {
      const signal = AbortSignal.timeout(timeoutMs)
      try {
        const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
        if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
        const response = await pool.request({ method: 'GET', path: basePath + path, headers, signal })
        const declared = Number(response.headers['content-length'])
        if (declared > maxBytes) {
          response.body.destroy()
          throw tooLarge(maxBytes)
        }
        const chunks: Buffer[] = []
        let size = 0
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          size += chunk.length
          if (size > maxBytes) {
            response.body.destroy()
            throw tooLarge(maxBytes)
          }
          chunks.push(chunk)
        }
        return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, size) }
      } catch (err) {
        throw err instanceof ProblemError ? err : classify(err, signal)
      }
    },
    async close () {
      await pool.close()
    }
  }
}

function tooLarge (maxBytes: number): ProblemError {
  return new ProblemError('upstream-bad-response', `The upstream post API sent more than ${maxBytes} bytes.`)
}
