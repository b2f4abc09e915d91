// The load of the 50-connection scenarios: wrk (bench/wrk.ts) when installed; otherwise
// autocannon, in this process, whose figures are flagged (on 2 cores it saturates before the
// baseline, so its ratios lean toward 1). undici for the few timed requests of the memory run.
import autocannon, { aggregateResult } from 'autocannon'
import { Pool, request } from 'undici'
import { createWrkLoad, hasWrk } from './wrk.js'

export interface RequestSpec {
  path: string
  ifNoneMatch?: string
}

/** The requests of one run, sent in this order and cycled through (a seeded sequence, or one request). */
export type RequestSequence = readonly RequestSpec[]

export interface LoadOptions {
  connections: number
  durationS: number
  /** Count every answer's status (not for multi-megabyte bodies: wrk would buffer each). */
  countStatuses: boolean
}

/** One run on one server. */
export interface LoadRun {
  requests: number
  durationS: number
  meanMs: number
  p50Ms: number
  p99Ms: number
  /** Answers by status, when counted. */
  statuses: Record<string, number> | undefined
  /** Answers with a status of 400 or more (always counted). */
  statusErrors: number
  /** Connection, read and write errors. */
  errors: number
  timeouts: number
  /** Bytes the load generator read: status lines, headers and bodies. */
  bytes: number
  /** CPU time of the load generator during the run, and the cores it may use. */
  generatorCpuMs: number
  generatorCores: number
}

export interface LoadGenerator {
  name: 'wrk' | 'autocannon'
  run: (origin: string, sequence: RequestSequence, options: LoadOptions) => Promise<LoadRun>
}

export interface LoadFigures {
  requestsPerSecond: number
  /** Request-weighted means of the rounds' percentiles (each round's come from its own histogram). */
  p50Ms: number
  p99Ms: number
  meanMs: number
  requests: number
  /** Responses with the scenario's status (when statuses were counted: else those not unexpected). */
  expected: number
  /** Responses with another status (or, uncounted, a status of 400 or more where 2xx was expected), plus errors and timeouts. */
  unexpected: number
  statuses: Record<string, number> | undefined
  errors: number
  timeouts: number
  /** Bytes read per answer, its head included: what an answer weighs on the send. */
  bytesPerAnswer: number
  generatorCpuMs: number
  generatorCores: number
}

/** A request slower than this is a timeout (and unexpected), so a stuck server cannot stall the run. */
const REQUEST_TIMEOUT_S = 10

/** wrk with `threads` threads when it is installed, else autocannon. */
export async function createLoadGenerator (threads: number): Promise<LoadGenerator> {
  return await hasWrk() ? createWrkLoad(threads, REQUEST_TIMEOUT_S) : autocannonLoad
}

/** autocannon in this process: the fallback, and the soak's mixed load. */
export const autocannonLoad: LoadGenerator = {
  name: 'autocannon',
  async run (origin, sequence, { connections, durationS }) {
    let next = 0
    const cpuBefore = process.cpuUsage()
    const raw = await autocannon({
      url: origin,
      connections,
      duration: Math.max(1, Math.round(durationS)),
      timeout: REQUEST_TIMEOUT_S,
      skipAggregateResult: true,
      requests: [{
        method: 'GET',
        setupRequest: (req) => {
          const spec = sequence[next++ % sequence.length] as RequestSpec
          const headers: Record<string, string> = spec.ifNoneMatch === undefined ? {} : { 'if-none-match': spec.ifNoneMatch }
          return { ...req, path: spec.path, headers }
        }
      }]
    })
    const cpu = process.cpuUsage(cpuBefore)
    const result = aggregateResult([raw], { url: origin })
    const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]))
    return {
      requests: raw.totalCompletedRequests,
      durationS: raw.duration,
      meanMs: result.latency.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      statuses,
      statusErrors: Object.entries(statuses).filter(([code]) => Number(code) >= 400).reduce((sum, [, n]) => sum + n, 0),
      errors: result.errors - result.timeouts,
      timeouts: result.timeouts,
      bytes: raw.totalBytes,
      generatorCpuMs: (cpu.user + cpu.system) / 1000,
      generatorCores: 1
    }
  }
}

/** The figures of several runs on one server. */
export function summarise (runs: readonly LoadRun[], expectedStatus: number): LoadFigures {
  const sum = (of: (run: LoadRun) => number): number => runs.reduce((total, run) => total + of(run), 0)
  const requests = sum((run) => run.requests)
  const seconds = sum((run) => run.durationS)
  const weighted = (of: (run: LoadRun) => number): number => requests === 0 ? 0 : sum((run) => of(run) * run.requests) / requests
  const counted = runs.every((run) => run.statuses !== undefined)
  const statuses: Record<string, number> | undefined = counted ? {} : undefined
  for (const run of runs) {
    for (const [code, n] of Object.entries(run.statuses ?? {})) if (statuses !== undefined) statuses[code] = (statuses[code] ?? 0) + n
  }
  const errors = sum((run) => run.errors)
  const timeouts = sum((run) => run.timeouts)
  // Uncounted (large bodies), a success is known only as "not 400 or more".
  const expected = statuses !== undefined ? statuses[expectedStatus] ?? 0 : expectedStatus < 400 ? requests - sum((run) => run.statusErrors) : 0
  return {
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    p50Ms: weighted((run) => run.p50Ms),
    p99Ms: weighted((run) => run.p99Ms),
    meanMs: weighted((run) => run.meanMs),
    requests,
    expected,
    unexpected: requests - expected + errors + timeouts,
    statuses,
    errors,
    timeouts,
    bytesPerAnswer: requests === 0 ? 0 : sum((run) => run.bytes) / requests,
    generatorCpuMs: sum((run) => run.generatorCpuMs),
    generatorCores: runs[0]?.generatorCores ?? 1
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
  const pool = new Pool(origin, { connections: Math.max(1, concurrent), headersTimeout: SLOW_BODY_MS, bodyTimeout: SLOW_BODY_MS })
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
