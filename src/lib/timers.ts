// The clock and timers, passed in wherever waiting is part of the behaviour (retries, heartbeats,
// probes, the store's queue), so that tests run an hour of them without waiting for it.

export interface Timers {
  /** Milliseconds since the epoch. */
  now: () => number
  /** Calls `callback` once, `ms` from now; returns what cancels it. */
  setTimeout: (callback: () => void, ms: number) => () => void
}

/** The process's clock and timers; a pending timer never keeps the process alive on its own. */
export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout (callback, ms) {
    const timer = setTimeout(callback, ms)
    timer.unref()
    return () => clearTimeout(timer)
  }
}
