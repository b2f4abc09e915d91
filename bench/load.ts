// The load: autocannon for the 50-connection scenarios, undici for the few timed requests of the
// memory run (time to first byte is not something autocannon reports).
import autocannon, { aggregateResult, type RawResult } from 'autocannon'
import { Pool, request } from 'undici'

export interface RequestSpec {
  path: string
  headers?: Record<string, string>
}

/** One fixed request, or a new one for every request (random slugs). */
export type RequestSource = RequestSpec | (() => RequestSpec)

export interface LoadFigures {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  meanMs: number
  /** Responses with the scenario's status. */
  expected: number
  /** Responses with any other status, plus errors and timeouts. */
  unexpected: number
  statuses: Record<string, number>
  errors: number
  timeouts: number
}

/** A request slower than this is a timeout (and unexpected), so a stuck server cannot stall the run. */
const REQUEST_TIMEOUT_S = 10

/** One run, kept raw so that rounds can be merged into one set of figures. */
export async function runLoad (origin: string, source: RequestSource,
  { connections, durationS }: { connections: number, durationS: number }): Promise<RawResult> {
  return await autocannon({
    url: origin,
    connections,
    duration: durationS,
    timeout: REQUEST_TIMEOUT_S,
    skipAggregateResult: true,
    requests: [typeof source === 'function'
      ? { method: 'GET', setupRequest: (req) => ({ ...req, ...source() }) }
      : { method: 'GET', ...source }]
  })
}

/** The figures of several runs on one server (latency histograms merged, not averaged). */
export function summarise (runs: RawResult[], origin: string, expectedStatus: number): LoadFigures {
  const seconds = runs.reduce((sum, run) => sum + run.duration, 0)
  const completed = runs.reduce((sum, run) => sum + run.totalCompletedRequests, 0)
  const result = aggregateResult(runs, { url: origin })
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]))
  const expected = statuses[expectedStatus] ?? 0
  const responses = Object.values(statuses).reduce((sum, count) => sum + count, 0)
  return {
    requestsPerSecond: seconds > 0 ? completed / seconds : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.average,
    expected,
    unexpected: responses - expected + result.errors,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts
  }
}

export interface TimedResponse {
  status: number
  /** Milliseconds from sending to the status line and headers. */
  headersMs: number
  /** Milliseconds to the first body byte. */
  firstByteMs: number
  totalMs: number
  bytes: number
  error?: string
}

const SLOW_BODY_MS = 60_000

async function timedGet (pool: Pool, path: string): Promise<TimedResponse> {
  const start = performance.now()
  const since = (): number => performance.now() - start
  let headersMs = 0
  let firstByteMs: number | undefined
  let bytes = 0
  try {
    const { statusCode, body } = await pool.request({ method: 'GET', path })
    headersMs = since()
    for await (const chunk of body as AsyncIterable<Buffer>) {
      firstByteMs ??= since()
      bytes += chunk.length
    }
    return { status: statusCode, headersMs, firstByteMs: firstByteMs ?? headersMs, totalMs: since(), bytes }
  } catch (err) {
    return { status: 0, headersMs, firstByteMs: firstByteMs ?? since(), totalMs: since(), bytes, error: (err as Error).message }
  }
}

/** The memory run: a few sequential requests, then a few at once, each timed to its first byte and its end. */
export async function timedRequests (origin: string, path: string,
  { sequential, concurrent }: { sequential: number, concurrent: number }): Promise<TimedResponse[]> {
  const pool = new Pool(origin, { connections: concurrent, headersTimeout: SLOW_BODY_MS, bodyTimeout: SLOW_BODY_MS })
  try {
    const responses: TimedResponse[] = []
    for (let i = 0; i < sequential; i++) responses.push(await timedGet(pool, path))
    responses.push(...await Promise.all(Array.from({ length: concurrent }, async () => await timedGet(pool, path))))
    return responses
  } finally {
    await pool.close()
  }
}

export async function getBody (origin: string, path: string): Promise<{ status: number, etag: string | undefined, body: Buffer }> {
  const { statusCode, headers, body } = await request(`${origin}${path}`, { headersTimeout: REQUEST_TIMEOUT_S * 1000, bodyTimeout: REQUEST_TIMEOUT_S * 1000 })
  const etag = headers.etag
  return { status: statusCode, etag: typeof etag === 'string' ? etag : undefined, body: Buffer.from(await body.arrayBuffer()) }
}

/** Each post's current ETag on one server, for the 304 scenario; a post answered without one is left out. */
export async function fetchEtags (origin: string, slugs: readonly string[]): Promise<Map<string, string>> {
  const etags = new Map<string, string>()
  const queue = [...slugs]
  const worker = async (): Promise<void> => {
    for (let slug = queue.pop(); slug !== undefined; slug = queue.pop()) {
      const { status, etag } = await getBody(origin, `/api/blog/${slug}`)
      if (status !== 200) throw new Error(`GET ${origin}/api/blog/${slug} answered ${status} while reading ETags`)
      if (etag !== undefined) etags.set(slug, etag)
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return etags
}
