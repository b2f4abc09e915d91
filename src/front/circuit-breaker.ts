// Fails fast while the upstream is known to be down: after a run of consecutive failures, calls
// are refused at once with the same problem as the last failure (so SPEC's mapping holds) and a
// Retry-After, until a cool-down lets one trial call through. Its success closes the breaker;
// its failure opens it again for twice as long (capped).
import { ProblemError } from '../problems.js'

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker; 0 disables it. */
  failures: number
  /** First open period; doubled after each failed trial, up to `maxOpenMs`. */
  openMs: number
  maxOpenMs: number
}

/** The open periods the front uses: fixed, only the failure count is a setting (BREAKER_FAILURES). */
export const BREAKER_OPEN_PERIODS: Pick<CircuitBreakerOptions, 'openMs' | 'maxOpenMs'> = { openMs: 1000, maxOpenMs: 30_000 }

export interface CircuitBreaker {
  /** Throws the fail-fast problem while open; lets calls (or the one trial) through otherwise. */
  check: () => void
  succeeded: () => void
  failed: (problem: ProblemError) => void
}

/** `now`: the clock, injected by tests. */
export function createCircuitBreaker ({ failures, openMs, maxOpenMs }: CircuitBreakerOptions, now: () => number = Date.now): CircuitBreaker {
  let consecutive = 0
  let openUntil = 0
  let period = openMs
  let trialInFlight = false
  let last: ProblemError | undefined

  return {
    check () {
      if (failures === 0 || consecutive < failures || last === undefined) return
      const remaining = openUntil - now()
      if (remaining <= 0 && !trialInFlight) {
        trialInFlight = true
        return
      }
      throw new ProblemError(last.kind, `${last.message} (failing fast while it is down)`, {
        retryAfter: Math.max(1, Math.ceil(remaining / 1000))
      })
    },
    succeeded () {
      consecutive = 0
      period = openMs
      trialInFlight = false
    },
    failed (problem) {
      last = problem
      consecutive++
      if (failures === 0 || consecutive < failures) return
      if (trialInFlight) period = Math.min(maxOpenMs, period * 2)
      trialInFlight = false
      openUntil = now() + period
    }
  }
}
