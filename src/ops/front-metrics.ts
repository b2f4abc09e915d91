// The front's metrics: upstream calls by outcome with their latency, requests that shared another
// request's call, answers served from held copies, and, read at each scrape, the held copies'
// size and the upstreams in rotation.
import { Counter, Histogram, type Registry } from 'prom-client'
import { ProblemError } from '../contract/problems.js'
import { isConnectFailure } from '../front/upstream/failures.js'
import { LATENCY_BUCKETS_S, METRIC_PREFIX, registerScrapedGauge } from './metrics.js'

/**
 * How one upstream call ended: it answered 200 (`ok`), 304, 404 for a post, 503 (`unavailable`),
 * or anything unusable (`bad-response`: another status, a body too large, of the wrong shape);
 * or nobody answered: the connection was `refused` (or the host not found), `reset` (broken
 * before or during the answer), or it ran out of time (`timeout`). A call is made even while no
 * upstream is in rotation (panic routing), so every outcome is an upstream's.
 */
export type UpstreamOutcome = 'ok' | 'not-modified' | 'not-found' | 'refused' | 'reset' | 'timeout' | 'bad-response' | 'unavailable'

const OUTCOMES: readonly UpstreamOutcome[] = ['ok', 'not-modified', 'not-found', 'refused', 'reset', 'timeout', 'bad-response', 'unavailable']

/** How a request's answer relates to the front's held copies. */
export type CacheResult = 'hit' | 'miss' | 'stale'

const CACHE_RESULTS: readonly CacheResult[] = ['hit', 'miss', 'stale']

/** What the front's upstream cache tells the metrics (src/front/cache/upstream-cache.ts). */
export interface UpstreamCacheObserver {
  /** One upstream call ended, after `ms`. */
  called: (outcome: UpstreamOutcome, ms: number) => void
  /** A request joined a call another request had started. */
  joined: () => void
  /** A request was answered with a body: `hit`, a held copy the upstream confirmed (304); `miss`, one it sent; `stale`, a held copy in place of a failure. */
  served: (result: CacheResult) => void
}

export interface FrontMetricSources {
  /** Upstreams in rotation now. */
  inRotation: () => number
  /** The held copies now. */
  held: () => { copies: number, bytes: number }
  /** The lists held as files (CACHE_DISK_MAX_MB), and their bytes. */
  heldOnDisk: () => { lists: number, bytes: number }
}

/** The outcome of a call that threw `err`: `status` is the upstream's answer if one came (its body was then unusable). */
export function failureOutcome (err: unknown, status: number | undefined): UpstreamOutcome {
  if (status !== undefined) return status === 503 ? 'unavailable' : 'bad-response'
  if (!(err instanceof ProblemError)) return 'bad-response'
  switch (err.kind) {
    case 'upstream-timeout': return 'timeout'
    case 'upstream-unavailable': return 'unavailable'
    case 'upstream-unreachable': return isConnectFailure(rootCause(err)) ? 'refused' : 'reset'
    default: return 'bad-response'
  }
}

/** The error under a problem, past the problems that wrap it (a failure while none was in rotation wraps the call's). */
function rootCause (err: ProblemError): unknown {
  let cause: unknown = err.cause
  while (cause instanceof ProblemError) cause = cause.cause
  return cause
}

/** The outcome of a call whose answer was used. */
export function answerOutcome (status: number): UpstreamOutcome {
  return status === 304 ? 'not-modified' : status === 404 ? 'not-found' : 'ok'
}

export function createFrontMetrics (registry: Registry, sources: FrontMetricSources): UpstreamCacheObserver {
  const callSeconds = new Histogram({
    name: `${METRIC_PREFIX}upstream_call_duration_seconds`,
    help: 'Calls to the upstream post API (its _count: calls) by outcome: ok, not-modified, not-found, refused, reset, timeout, bad-response, unavailable',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS_S,
    registers: [registry]
  })
  const coalesced = new Counter({
    name: `${METRIC_PREFIX}upstream_coalesced_requests_total`,
    help: 'Requests that shared an upstream call another request had started, instead of making their own',
    registers: [registry]
  })
  const cache = new Counter({
    name: `${METRIC_PREFIX}front_cache_requests_total`,
    help: 'Requests answered with a body, by result: hit (a held copy the upstream confirmed with 304), miss (a body the upstream sent), stale (a held copy in place of a failure, STALE_IF_ERROR_S)',
    labelNames: ['result'] as const,
    registers: [registry]
  })
  registerScrapedGauge(registry, 'front_cache_bytes',
    'Bytes the held copies of upstream bodies and the page indexes of list shapes are counted for (CACHE_MAX_MB bounds it)',
    () => sources.held().bytes)
  registerScrapedGauge(registry, 'front_cache_copies', 'Upstream bodies held for revalidation, and page indexes of list shapes',
    () => sources.held().copies)
  registerScrapedGauge(registry, 'front_cache_disk_bytes', 'Bytes of the lists too large for memory held as files (CACHE_DISK_MAX_MB bounds it)',
    () => sources.heldOnDisk().bytes)
  registerScrapedGauge(registry, 'front_cache_disk_lists', 'Lists too large for memory held as files', () => sources.heldOnDisk().lists)
  registerScrapedGauge(registry, 'upstreams_in_rotation', 'Upstream post APIs in rotation (0: the front is not ready)', () => sources.inRotation())

  // Every child made once, and shown at 0 before it first counts (so rates and ratios exist from the start).
  const calls = new Map(OUTCOMES.map((outcome) => {
    callSeconds.zero({ outcome })
    return [outcome, callSeconds.labels({ outcome })]
  }))
  const served = Object.fromEntries(CACHE_RESULTS.map((result) => {
    const child = cache.labels({ result })
    child.inc(0)
    return [result, child]
  })) as Record<CacheResult, { inc: () => void }>
  return {
    called: (outcome, ms) => calls.get(outcome)?.observe(ms / 1000),
    joined: () => coalesced.inc(),
    served: (result) => served[result].inc()
  }
}
