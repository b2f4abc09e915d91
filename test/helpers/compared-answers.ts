// Two servers of one tier, one with its fast lane and one without, compared over real HTTP: what
// each answered, wrote in its access log and counted in its request metrics, without what
// differs between two processes and two moments (the date, the time taken, the pid).
import assert from 'node:assert/strict'
import type { Pool } from 'undici'
import type { ProcessMetrics } from '../../src/ops/metrics.js'
import type { LogSink } from './log-sink.js'
import { parseMetrics, samplesOf } from './metrics-text.js'
import { pollUntil } from './poll.js'

/** One of the compared servers: a pool to it, its log and its metrics. */
export interface ComparedServer {
  pool: Pool
  sink: LogSink
  metrics: ProcessMetrics
}

export interface Answer {
  status: number
  /** Every header but `date`. */
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

export async function ask (server: ComparedServer, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const { statusCode, headers: received, body } = await server.pool.request({ method, path, headers })
  const bytes = Buffer.from(await body.arrayBuffer())
  const { date, ...compared } = received
  assert.ok(typeof date === 'string')
  return { status: statusCode, headers: compared, body: bytes }
}

/** The access line of `reqId`, without its time, duration, pid and host. */
export async function accessLine (server: ComparedServer, reqId: string): Promise<Record<string, unknown>> {
  const line = await pollUntil(`the access line of ${reqId}`, () => server.sink.lines.find((l) => l.reqId === reqId && l.msg === 'request'))
  const { time, ms, pid, hostname, ...rest } = line
  assert.equal(typeof ms, 'number')
  return rest
}

/** Requests counted per tier, route, method and status. */
export async function requestCounts (server: ComparedServer): Promise<Record<string, number>> {
  const samples = samplesOf(parseMetrics(await server.metrics.registry.metrics()), 'blog_read_api_http_request_duration_seconds_count')
  return Object.fromEntries(samples.map((s) => [`${s.labels.tier} ${s.labels.route} ${s.labels.method} ${s.labels.status}`, s.value]))
}
