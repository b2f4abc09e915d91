// A bounded load for the fault-under-load tests: autocannon's programmatic API, every
// answer recorded with its time, and each non-200 checked against the problem kinds it may be.
import { createRequire } from 'node:module'
import { PROBLEM_TYPE_BASE, PROBLEMS, type ProblemKind } from '../../src/contract/problems.js'

/** One answer: when it came and when its request was sent (ms since the load started), its status and, for errors, its problem kind. */
export interface Answer {
  at: number
  sentAt: number
  status: number
  /** The problem kind, when the body is a well-formed problem document of the status it came with. */
  kind: ProblemKind | undefined
  retryAfter: string | undefined
}

export interface Load {
  answers: Answer[]
  /** Connection errors and time-outs seen by the load generator (a hang or a dropped socket). */
  errors: string[]
  startedAt: number
  /** Ms since the load started. */
  elapsed: () => number
  /** Stops the load (at the next sample tick) and resolves once every connection is closed. */
  stop: () => Promise<void>
}

interface AutocannonInstance {
  on: (event: 'reqError', listener: (err: Error) => void) => void
  stop: () => void
}
type Autocannon = (options: Record<string, unknown>, done: (err: Error | null) => void) => AutocannonInstance

// autocannon ships no types, and bench/ declares its own module types: load it untyped here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

function problemKind (status: number, body: string, contentType: string | undefined): ProblemKind | undefined {
  if (contentType?.startsWith('application/problem+json') !== true) return undefined
  try {
    const doc = JSON.parse(body) as Record<string, unknown>
    const kind = typeof doc.type === 'string' && doc.type.startsWith(PROBLEM_TYPE_BASE) ? doc.type.slice(PROBLEM_TYPE_BASE.length) : ''
    if (!(kind in PROBLEMS)) return undefined
    const problem = PROBLEMS[kind as ProblemKind]
    return problem.status === status && doc.status === status && doc.title === problem.title && typeof doc.detail === 'string' ? kind as ProblemKind : undefined
  } catch {
    return undefined
  }
}

/** Starts `connections` keep-alive clients cycling through `paths` on `url` until stopped (at most `maxS`). */
export function startLoad (url: string, paths: string[], { connections = 10, maxS = 30 } = {}): Load {
  const answers: Answer[] = []
  const errors: string[] = []
  const startedAt = Date.now()
  let finish!: () => void
  const finished = new Promise<void>((resolve) => { finish = resolve })
  const instance = autocannon({
    url,
    connections,
    duration: maxS,
    // Stops within 100 ms of stop() (it acts on the sample tick).
    sampleInt: 100,
    timeout: 10,
    requests: paths.map((path) => ({
      method: 'GET',
      path,
      // Called as each request is made, just before it is written; the context is its connection's.
      setupRequest: (request: unknown, context: { sentAt?: number }) => {
        context.sentAt = Date.now() - startedAt
        return request
      },
      onResponse: (status: number, body: string, context: { sentAt?: number }, headers: Record<string, string>) => {
        answers.push({
          at: Date.now() - startedAt,
          sentAt: context.sentAt ?? 0,
          status,
          kind: status === 200 ? undefined : problemKind(status, body, headers['content-type']),
          retryAfter: headers['retry-after']
        })
      }
    }))
  }, () => finish()) // called once, after autocannon destroyed its clients
  instance.on('reqError', (err) => errors.push(err.message))
  return {
    answers,
    errors,
    startedAt,
    elapsed: () => Date.now() - startedAt,
    stop: async () => {
      instance.stop()
      await finished
    }
  }
}

/** Answers to the requests sent at `from` or later: none of them was on its way before. */
export const sentSince = (answers: Answer[], from: number): Answer[] => answers.filter((a) => a.sentAt >= from)

/** Answers whose `at` falls in [from, to). */
export const between = (answers: Answer[], from: number, to = Infinity): Answer[] => answers.filter((a) => a.at >= from && a.at < to)

/** A compact count of statuses and kinds, for assertion messages. */
export function tally (answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const a of answers) {
    const key = a.status === 200 ? '200' : `${a.status} ${a.kind ?? 'NOT-A-PROBLEM'}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}
