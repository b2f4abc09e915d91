// The front's only way to the upstream post APIs: GETs through undici Dispatchers (keep-alive
// Pools in production; MockAgents in tests), spread over the upstreams in rotation, bounded in
// time and in bytes, whose failures come out already classified as the contract's 502 / 503 / 504
// problems. A GET that got no answer because the connection failed, broke, or met an upstream
// shutting down is tried once more, on another upstream in rotation (or on a fresh connection to
// the same one); one that an upstream shed at once (503 `overloaded`), on another in rotation
// only. Both within a retry budget; never after a time-out.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { UpstreamHealthSettings, UpstreamTimeouts } from '../../config.js'
import { POSTS_VERSION_HEADER, VERSION_PATH, versionIn } from '../../contract/posts-version.js'
import type { ProblemError } from '../../contract/problems.js'
import type { Timers } from '../../lib/timers.js'
import { EVENT_STREAM_TYPE } from '../../sync/sse-frame.js'
import { createRetryBudget, RETRY_BUDGET } from './retry-budget.js'
import { CallDeadline, DeadlineError, exchange, type Answer, type ExchangeLimits } from './exchange.js'
import { classify, drainingProblem, isAbsence, isDraining, isShed, retryScope, type RetryScope } from './failures.js'
import { probeUpstream } from './health.js'
import { createUpstreamPool, type PoolMember } from './pool.js'
import { createUpstreamTransport, phaseTimeouts, upstreamPath, type UpstreamTransport } from './transport.js'

export interface UpstreamResponse extends Answer {
  /** Which upstream answered: its base URL as API_URL lists it (the `href`). */
  upstream: string
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
  /**
   * Asks `upstream` (a base URL's href, as UpstreamResponse names it) for the posts version it
   * reads now (src/contract/posts-version.ts), after this call. Resolves with the answer's status and
   * version (undefined: none, or not a 200), or undefined when that upstream is not in rotation
   * (no call is made); rejects like `get` when no answer came. Never retried elsewhere: another
   * upstream's version says nothing of this one's.
   */
  version (upstream: string, requestId: string): Promise<{ status: number, version: string | undefined } | undefined>
  /** Upstreams in rotation now (0: the front is not ready, and calls go to every upstream). */
  inRotation (): number
  /**
   * Opens the change stream of an upstream in rotation (the next one at each call, so a front
   * whose stream broke resumes on another), after `lastEventId`; resolves with its body once the
   * upstream answered 200 with an event stream, else rejects. No time-out but the headers':
   * `signal` ends it. Absent on test doubles without streams.
   */
  openStream?: (path: string, lastEventId: string | undefined, signal: AbortSignal) => Promise<AsyncIterable<Uint8Array>>
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
  /** The timers of the probes (tests); the process's by default. */
  timers?: Timers
}

/** One try on one dispatcher: the answer (read, or streaming), or why there was none. */
type Try = { response: Answer, error?: undefined } | { error: unknown, response?: undefined }

/** The version route's answer is a few bytes. */
const VERSION_MAX_BYTES = 1024

export function createUpstreamClient ({ upstreams, timeouts, health, logger, timers }: UpstreamClientOptions): PooledUpstreamClient {
  const pool = createUpstreamPool({
    upstreams,
    ...health,
    timers,
    probe: async (upstream, stop) => await probeUpstream(upstream, timeouts, stop),
    onChange: (upstream, inRotation, failure) => {
      if (inRotation) logger?.info(`upstream ${upstream.apiUrl.href} answered its probe: back in rotation`)
      else logger?.warn({ err: failure }, `upstream ${upstream.apiUrl.href} out of rotation after ${health.ejectFailures} failures in a row; probing it`)
    }
  })
  const retries = createRetryBudget(RETRY_BUDGET)

  const phases = phaseTimeouts(timeouts)

  async function tryOn (dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, limits: ExchangeLimits, deadline: CallDeadline): Promise<Try> {
    try {
      return { response: await exchange(dispatcher, request, limits, deadline) }
    } catch (error) {
      return { error }
    }
  }

  /** Where the failed first try may be repeated (see RetryScope). */
  function scopeOf (first: Try, deadline: CallDeadline): RetryScope {
    if (deadline.expired) return undefined
    if (first.response === undefined) return retryScope(first.error)
    const { status, headers, body } = first.response
    if (isDraining(status, headers)) return 'anywhere'
    return isShed(status, body) ? 'elsewhere' : undefined
  }

  function headersFor (requestId: string, ifNoneMatch: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
    if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch
    return headers
  }

  const requestOn = ({ apiUrl }: UpstreamTransport, path: string, headers: Record<string, string>): Dispatcher.DispatchOptions =>
    ({ origin: apiUrl.origin, method: 'GET', path: upstreamPath(apiUrl, path), headers, ...phases })

  /** An answer came: the upstream is there, unless it said it is shutting down; serving, unless it answered 503. */
  function recordAnswer (member: PoolMember<UpstreamTransport>, { status, headers }: Answer): void {
    if (isDraining(status, headers)) pool.record(member, drainingProblem())
    else pool.record(member, undefined, status !== 503)
  }

  /** The problem of a call that failed; only "nobody answered" counts against its upstream (a wrong answer shows it is there). */
  function recordFailure (member: PoolMember<UpstreamTransport>, err: unknown): ProblemError {
    const problem = classify(err, err instanceof DeadlineError)
    pool.record(member, isAbsence(problem) ? problem : undefined)
    return problem
  }

  async function get (path: string, { requestId, maxBytes, ifNoneMatch, streamAbove }: UpstreamGetOptions): Promise<UpstreamResponse> {
    // With none in rotation, the pool still picks one (panic routing); a failure then says so.
    const outage = pool.inRotation() === 0
    let member = pool.pick()
    if (member === undefined) throw new Error('a pool always has an upstream to pick')
    retries.called()
    const deadline = new CallDeadline(timeouts.totalMs)
    const headers = headersFor(requestId, ifNoneMatch)
    const limits = { maxBytes, streamAbove }
    let fresh: Dispatcher | undefined
    member.pending++
    try {
      let tried = await tryOn(member.upstream.dispatcher, requestOn(member.upstream, path, headers), limits, deadline)
      const scope = scopeOf(tried, deadline)
      const other = scope === undefined ? undefined : pool.pick(member)
      if ((other !== undefined || scope === 'anywhere') && retries.tryRetry()) {
        // The first try got no answer, or one that did nothing: it counts as its upstream's; the
        // retry goes to another in rotation, or else on a fresh connection to the same one.
        if (tried.response === undefined) pool.record(member, classify(tried.error, false))
        else recordAnswer(member, tried.response)
        tried.response?.stream?.destroy()
        if (other !== undefined) {
          member.pending--
          member = other
          member.pending++
          tried = await tryOn(member.upstream.dispatcher, requestOn(member.upstream, path, headers), limits, deadline)
        } else {
          fresh = member.upstream.connectFresh()
          // Jittered, so a burst of broken sockets does not come back as one burst.
          await sleep(25 + Math.random() * 225)
          tried = await tryOn(fresh, requestOn(member.upstream, path, headers), limits, deadline)
        }
      }
      if (tried.response === undefined) throw tried.error
      const answer = tried.response
      if (fresh !== undefined && answer.stream !== undefined) {
        const used = fresh
        answer.stream.once('close', () => { used.close().catch(() => {}) })
        fresh = undefined
      }
      recordAnswer(member, answer)
      return { ...answer, upstream: member.upstream.apiUrl.href }
    } catch (err) {
      const problem = recordFailure(member, err)
      throw outage ? pool.duringOutage(problem) : problem
    } finally {
      member.pending--
      fresh?.close().catch(() => {})
      // Also when a stream is handed over: from then on only the idle time-out bounds it.
      deadline.release()
    }
  }

  async function version (upstream: string, requestId: string): Promise<{ status: number, version: string | undefined } | undefined> {
    const member = pool.find(({ apiUrl }) => apiUrl.href === upstream)
    if (member === undefined) return undefined
    const deadline = new CallDeadline(timeouts.totalMs)
    member.pending++
    try {
      const answer = await exchange(member.upstream.dispatcher, requestOn(member.upstream, VERSION_PATH, headersFor(requestId, undefined)),
        { maxBytes: VERSION_MAX_BYTES, streamAbove: undefined }, deadline)
      recordAnswer(member, answer)
      return { status: answer.status, version: answer.status === 200 ? versionIn(answer.headers[POSTS_VERSION_HEADER]) : undefined }
    } catch (err) {
      throw recordFailure(member, err)
    } finally {
      member.pending--
      deadline.release()
    }
  }

  async function openStream (path: string, lastEventId: string | undefined, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const member = pool.pick()
    if (member === undefined) throw new Error('a pool always has an upstream to pick')
    const { apiUrl, dispatcher } = member.upstream
    const headers: Record<string, string> = { accept: EVENT_STREAM_TYPE, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) }
    try {
      const response = await dispatcher.request({ origin: apiUrl.origin, method: 'GET', path: upstreamPath(apiUrl, path), headers, signal, headersTimeout: phases.headersTimeout, bodyTimeout: 0 })
      const type = String(response.headers['content-type'] ?? '')
      if (response.statusCode !== 200 || !type.startsWith(EVENT_STREAM_TYPE)) {
        await response.body.dump()
        throw new Error(`the upstream answered the change stream with status ${response.statusCode} (${type})`)
      }
      pool.record(member, undefined)
      return response.body
    } catch (err) {
      if (!signal.aborted) recordFailure(member, err)
      throw err
    }
  }

  return {
    get,
    version,
    openStream,
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
