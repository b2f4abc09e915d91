// Timers that move only when the test says: `advance` runs every callback that falls due, in
// time order, including those scheduled meanwhile, so an hour of back-off takes no time.
import type { Timers } from '../../src/lib/timers.js'

export interface ManualTimers extends Timers {
  /** Moves the clock `ms` forward, running what falls due. */
  advance: (ms: number) => void
  /** Moves the clock to the next pending timer and runs it; false when none is pending. */
  next: () => boolean
  /** Timers pending now. */
  pending: () => number
  /** Whether a pending timer falls due within `ms` from now. */
  dueWithin: (ms: number) => boolean
}

export function createManualTimers (start = Date.now()): ManualTimers {
  let now = start
  let sequence = 0
  const due: Array<{ at: number, order: number, callback: () => void }> = []
  const runUntil = (limit: number): void => {
    for (;;) {
      due.sort((a, b) => a.at - b.at || a.order - b.order)
      const first = due[0]
      if (first === undefined || first.at > limit) break
      due.shift()
      now = Math.max(now, first.at)
      first.callback()
    }
    now = Math.max(now, limit)
  }
  return {
    now: () => now,
    setTimeout (callback, ms) {
      const entry = { at: now + Math.max(0, ms), order: sequence++, callback }
      due.push(entry)
      return () => {
        const index = due.indexOf(entry)
        if (index !== -1) due.splice(index, 1)
      }
    },
    advance: (ms) => runUntil(now + ms),
    next () {
      due.sort((a, b) => a.at - b.at || a.order - b.order)
      const first = due[0]
      if (first === undefined) return false
      runUntil(first.at)
      return true
    },
    pending: () => due.length,
    dueWithin: (ms) => due.some(({ at }) => at <= now + ms)
  }
}
