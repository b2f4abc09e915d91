// The post API's bound on store work (STORE_CONCURRENCY): each store read that builds an answer
// (a search or a count is one too, and takes a turn the same way) takes a turn of one gate per
// process; the rest wait briefly, then are refused with 503 `overloaded` and Retry-After.
// Answers built already, change-token reads (what the fronts confirm their copies with) and the
// probes never wait here. The numbers, in one place:
import { createConcurrencyGate, GateRefusedError, type ConcurrencyGate } from '../lib/concurrency-gate.js'
import { ProblemError } from '../contract/problems.js'
import { realTimers, type Timers } from '../lib/timers.js'

/**
 * Reads that may wait, per turn: 4 × STORE_CONCURRENCY (40 by default). An uncached read takes a
 * few milliseconds, so a full queue drains in about four reads' time; a deeper one would only
 * turn quick refusals into slow ones, since past MAX_STORE_WAIT_MS they are refused anyway.
 */
export const QUEUED_PER_TURN = 4
/**
 * Longest wait for a turn: 1 s. Far below the front's budget for an upstream call
 * (UPSTREAM_TIMEOUT_MS, 10 s by default), so that the front gets a 503 it relays, with its
 * Retry-After, rather than timing out; and long enough to ride out a burst.
 */
export const MAX_STORE_WAIT_MS = 1000
/** Retry-After of a refused read: the queue drains within a second. */
export const STORE_BUSY_RETRY_AFTER_S = 1

export type { ConcurrencyGate } from '../lib/concurrency-gate.js'

/** The gate of one post API process; `timers` are injected by tests. */
export function createStoreGate (concurrency: number, timers: Pick<Timers, 'setTimeout'> = realTimers): ConcurrencyGate {
  return createConcurrencyGate({
    limit: concurrency,
    maxQueue: QUEUED_PER_TURN * concurrency,
    maxWaitMs: MAX_STORE_WAIT_MS,
    setTimeout: timers.setTimeout
  })
}

/** A refused read as the problem it is answered with, or undefined for any other error. */
export function storeBusyProblem (err: unknown): ProblemError | undefined {
  if (!(err instanceof GateRefusedError)) return undefined
  const why = err.reason === 'queue-full' ? 'Too many store reads are waiting' : 'No store read could start in time'
  return new ProblemError('overloaded', `${why}; try again shortly.`, { cause: err, retryAfter: STORE_BUSY_RETRY_AFTER_S })
}
