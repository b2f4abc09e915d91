// The front's only way to the upstream post APIs: GETs through undici Dispatchers (keep-alive
// Pools in production; MockAgents in tests), spread over the upstreams in rotation, bounded in
// time and in bytes, whose failures come out already classified as SPEC's 502 / 503 / 504
// problems. A GET that got no answer because the connection failed, broke, or met an upstream
// shutting down is tried once more, on another upstream in rotation (or on a fresh connection to
// the same one), within a retry budget; never after a time-out.
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { UpstreamHealthSettings, UpstreamTimeouts } from '../config.js'
import { ProblemError } from '../problems.js'
import { resumedStream } from '../resumed-stream.js'
import { createRetryBudget, RETRY_BUDGET } from './retry-budget.js'
import { classify, drainingProblem, isAbsence, isDraining, retryScope, type RetryScope } from './upstream-failures.js'
import { probeUpstream } from './upstream-health.js'
import { createUpstreamPool } from './upstream-pool.js'
import { createUpstreamTransport, phaseTimeouts, upstreamPath, type UpstreamTransport } from './upstream-transport.js'

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

/** GETs on the upstream post APIs. Rejects only with ProblemError (502 unreachable or bad, 503, 504). */
export interface UpstreamClient {
  get (path: string, options: UpstreamGetOptions): Promise<UpstreamResponse>
  /** Upstreams in rotation now (0: calls fail fast, and the front is not ready). */
  inRotation (): number
}

/** The client with its pool of upstreams. */
export interface PooledUpstreamClient extends UpstreamClient {
  /** Stops probing; closes the transports if this client made them. */
  close (): Promise<void>
}

export interface UpstreamClientOptions {
  /** One per base URL of API_URL. */
  upstreams: readonly UpstreamTransport[]
  timeouts: UpstreamTimeouts
  health: UpstreamHealthSettings
  /** Told when an upstream leaves rotation or comes back. */
  logger?: Pick<Logger, 'warn' | 'info'>
}

/** Bytes of a body of unknown length read before it is handed over as a stream. */
const UNKNOWN_LENGTH_WINDOW = 1024 * 1024

/** One try on one dispatcher: the response (headers received), or why there was none. */
type Try = { response: Dispatcher.ResponseData, error?: undefined } | { error: unknown, response?: undefined }

export function createUpstreamClient ({ upstreams, timeouts, health, logger }: UpstreamClientOptions): PooledUpstreamClient {
  const pool = createUpstreamPool({
    upstreams,
    ...health,
    probe: async (upstream, stop) => await probeUpstream(upstream, timeouts, stop),
    onChange: (upstream, inRotation, failure) => {
      if (inRotation) logger?.info(`upstream ${upstream.apiUrl.href} answered its probe: back in rotation`)
      else logger?.warn({ err: failure }, `upstream ${upstream.apiUrl.href} out of rotation after ${health.ejectFailures} failures in a row; probing it`)
    }
  })
  const retries = createRetryBudget(RETRY_BUDGET)

  async function tryOn (dispatcher: Dispatcher, request: Dispatcher.RequestOptions): Promise<Try> {
    try {
      return { response: await dispatcher.request(request) }
    } catch (error) {
      return { error }
    }
  }

  /** Where the failed first try may be repeated (see RetryScope). */
  function scopeOf (first: Try, signal: AbortSignal): RetryScope {
    if (signal.aborted) return undefined
    if (first.response === undefined) return retryScope(first.error)
    return isDraining(first.response.statusCode, first.response.headers) ? 'anywhere' : undefined
  }

  async function get (path: string, { requestId, maxBytes, ifNoneMatch, streamAbove }: UpstreamGetOptions): Promise<UpstreamResponse> {
    let member = pool.pick()
    if (member === undefined) throw pool.outage()
    retries.called()
    const budget = startCallBudget(timeouts.totalMs)
    const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
    if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
    const requestOn = ({ apiUrl }: UpstreamTransport): Dispatcher.RequestOptions =>
      ({ origin: apiUrl.origin, method: 'GET', path: upstreamPath(apiUrl, path), headers, signal: budget.signal, ...phaseTimeouts(timeouts) })
    let fresh: Dispatcher | undefined
    member.pending++
    try {
      let tried = await tryOn(member.upstream.dispatcher, requestOn(member.upstream))
      const scope = scopeOf(tried, budget.signal)
      const other = scope === undefined ? undefined : pool.pick(member)
      if ((other !== undefined || scope === 'anywhere') && retries.tryRetry()) {
        // The first try got no answer: it counts against its upstream; the retry goes to another
        // in rotation, or else on a fresh connection to the same one.
        pool.record(member, tried.response === undefined ? classify(tried.error, false) : drainingProblem())
        await tried.response?.body.dump()
        if (other !== undefined) {
          member.pending--
          member = other
          member.pending++
          tried = await tryOn(member.upstream.dispatcher, requestOn(member.upstream))
        } else {
          fresh = member.upstream.connectFresh()
          // Jittered, so a burst of broken sockets does not come back as one burst.
          await sleep(25 + Math.random() * 225, undefined, { signal: budget.signal })
          tried = await tryOn(fresh, requestOn(member.upstream))
        }
      }
      if (tried.response === undefined) throw tried.error
      const response = tried.response
      if (fresh !== undefined) {
        const used = fresh
        response.body.once('close', () => { used.close().catch(() => {}) })
        fresh = undefined
      }
      const answer = await readBody(response, maxBytes, streamAbove)
      pool.record(member, isDraining(answer.status, answer.headers) ? drainingProblem() : undefined)
      return answer
    } catch (err) {
      const problem = classify(err, budget.signal.aborted)
      // A wrong answer shows the upstream is there; only "nobody answered" counts against it.
      pool.record(member, isAbsence(problem) ? problem : undefined)
      throw problem
    } finally {
      member.pending--
      fresh?.destroy().catch(() => {})
      // Also when a stream is handed over: from then on only the idle time-out bounds it.
      budget.release()
    }
  }

  return {
    get,
    inRotation: () => pool.inRotation(),
    // The transports were given: whoever made them closes them.
    close: async () => pool.close()
  }
}

/** The production client over every base URL of API_URL; closing it closes its connections. */
export function openUpstreamClient (apiUrls: readonly URL[], options: Omit<UpstreamClientOptions, 'upstreams'>): PooledUpstreamClient {
  const upstreams = apiUrls.map((url) => createUpstreamTransport(url, options.timeouts))
  const client = createUpstreamClient({ ...options, upstreams })
  return {
    ...client,
    async close () {
      await client.close()
      await Promise.all(upstreams.map(async ({ dispatcher }) => await dispatcher.close()))
    }
  }
}

/** Reads a response whole, or up to the point where it is handed over as a stream. */
async function readBody (response: Dispatcher.ResponseData, maxBytes: number, streamAbove: number | undefined): Promise<UpstreamResponse> {
  const { statusCode: status, headers } = response
  const declared = declaredLength(headers)
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
    if (size > streamPast) return { status, headers, body: Buffer.alloc(0), stream: resumedStream(read, chunks) }
  }
  return { status, headers, body: Buffer.concat(read, size) }
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

function tooLarge (maxBytes: number): ProblemError {
  return new ProblemError('upstream-bad-response', `The upstream post API sent more than ${maxBytes} bytes.`)
}
