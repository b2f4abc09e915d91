// What a failed upstream call means: the contract's 502 (nobody answered usefully) or 504 (too slow), and
// whether it may be tried again, and where.
import type { IncomingHttpHeaders } from 'node:http'
import { PROBLEM_TYPE_BASE, ProblemError } from '../../contract/problems.js'

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
/** The connection could not be made: nothing was sent, but a new connection there fails alike. */
const CONNECT_FAILURE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])
/** A connection that broke before any answer: on a reused socket, the keep-alive race. */
const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

/**
 * Where a failed try may be repeated: `elsewhere`, on another upstream in rotation only (it could
 * not connect); `anywhere`, there or on a fresh connection to the same upstream (it broke before
 * answering, or is shutting down); undefined, nowhere (a time-out, an answer, anything else).
 */
export type RetryScope = 'elsewhere' | 'anywhere' | undefined

export function retryScope (err: unknown): RetryScope {
  const code = codeOf(err)
  if (code === undefined) return undefined
  if (CONNECT_FAILURE_CODES.has(code)) return 'elsewhere'
  return BROKEN_CODES.has(code) ? 'anywhere' : undefined
}

/** Whether `err` says the connection could not be made (refused, host not found), as opposed to one that broke. */
export function isConnectFailure (err: unknown): boolean {
  const code = codeOf(err)
  return code !== undefined && CONNECT_FAILURE_CODES.has(code)
}

/**
 * A 503 with `Connection: close`: the upstream is shutting down (our post API answers requests on
 * kept-alive connections so while it drains), and the request did nothing there.
 */
export function isDraining (status: number, headers: IncomingHttpHeaders): boolean {
  return status === 503 && /(?:^|,)\s*close\s*(?:,|$)/i.test(String(headers.connection ?? ''))
}

const SHED_TYPE = `${PROBLEM_TYPE_BASE}overloaded`

/**
 * A 503 `overloaded`: the upstream shed the request at once, before any work, because its own
 * event loop lagged. Another upstream may well answer it; a plain 503 (its store is down) is
 * relayed, since the others most likely share that store.
 */
export function isShed (status: number, body: Buffer): boolean {
  if (status !== 503 || body.length === 0) return false
  try {
    return (JSON.parse(body.toString('utf8')) as { type?: unknown } | null)?.type === SHED_TYPE
  } catch {
    return false
  }
}

/** The problem of a call that got no usable answer: 504 if it ran out of time, else 502. */
export function classify (err: unknown, timedOut: boolean): ProblemError {
  if (err instanceof ProblemError) return err
  const code = codeOf(err)
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ProblemError('upstream-timeout', 'The upstream post API did not answer in time.', { cause: err })
  }
  return new ProblemError('upstream-unreachable', 'The upstream post API could not be reached or broke the connection.', { cause: err })
}

/** What an upstream that answered 503 while shutting down counts as. */
export function drainingProblem (): ProblemError {
  return new ProblemError('upstream-unavailable', 'The upstream post API is shutting down.')
}

/** Failures that say nobody is there (refused, broken, timed out, draining), as opposed to a wrong answer. */
export function isAbsence (problem: ProblemError): boolean {
  return problem.kind === 'upstream-unreachable' || problem.kind === 'upstream-timeout' || problem.kind === 'upstream-unavailable'
}

function codeOf (err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
