// How many calls the front may retry: a share of the calls of the last few seconds, plus a few
// each second (Finagle's RetryBudget; Google SRE book, "Handling Overload": retries bounded by a
// ratio of requests, so a fleet that fails everything does not get twice the load). Counted over
// time rather than among calls in flight, so a burst (an upstream going away takes every request
// on its kept-alive connections with it) is retried whole, while a steady failure is not.

export interface RetryBudgetOptions {
  /** Retries allowed per call made within the window. */
  ratio: number
  /** Retries allowed each second whatever the traffic, so a quiet front still recovers. */
  minPerSecond: number
  windowMs: number
}

/** The budget the front uses: 20 % of calls over 10 s, plus 10 retries a second. */
export const RETRY_BUDGET: RetryBudgetOptions = { ratio: 0.2, minPerSecond: 10, windowMs: 10_000 }

export interface RetryBudget {
  /** Counts a call (its first try). */
  called: () => void
  /** Takes one retry from the budget; false when it is spent. */
  tryRetry: () => boolean
}

/** Slots the window is counted in. */
const SLOTS = 10

/** `now`: the clock, injected by tests. */
export function createRetryBudget ({ ratio, minPerSecond, windowMs }: RetryBudgetOptions, now: () => number = Date.now): RetryBudget {
  const slotMs = windowMs / SLOTS
  const calls = new Array<number>(SLOTS).fill(0)
  const retries = new Array<number>(SLOTS).fill(0)
  let current = Math.floor(now() / slotMs)

  /** The slot of this moment, after clearing those that left the window. */
  function slot (): number {
    const at = Math.floor(now() / slotMs)
    for (let stale = Math.min(at - current, SLOTS); stale > 0; stale--) {
      const index = (at - stale + 1) % SLOTS
      calls[index] = 0
      retries[index] = 0
    }
    current = Math.max(current, at)
    return current % SLOTS
  }
  const sum = (counts: number[]): number => counts.reduce((a, b) => a + b, 0)
  const add = (counts: number[], index: number): void => { counts[index] = (counts[index] ?? 0) + 1 }

  return {
    called () {
      add(calls, slot())
    },
    tryRetry () {
      const index = slot()
      if (sum(retries) >= sum(calls) * ratio + minPerSecond * windowMs / 1000) return false
      add(retries, index)
      return true
    }
  }
}
