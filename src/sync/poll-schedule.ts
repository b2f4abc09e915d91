// Polls at a fixed rate, measured start to start, with each read's own time inside the period:
// a commit made just after one read started is seen by the next, which must END within the
// period of that start for an event to follow the commit within it. So the next read starts the
// period minus the slowest of the last few reads after the one before it started (at once when
// reads take half the period or more), rather than a period after the previous one ended, which
// put the event a period plus a read after the commit (1,070 ms at the 99th percentile with a
// 1,000 ms period and 70 ms reads of every row on MySQL/MariaDB).
import type { Timers } from '../lib/timers.js'

/** Reads whose time the next start allows for: a slow read is remembered for a few polls. */
const RECENT_READS = 4

export interface PollSchedule {
  /** Starts polling (the first read a period less the slowest recent read from now) or stops it; a read in flight ends first. */
  setWanted: (wanted: boolean) => void
  close: () => void
}

export interface PollScheduleOptions {
  periodMs: number
  timers: Timers
  /** One read; it handles its own failures (the next poll tries again). */
  poll: () => Promise<void>
}

export function createPollSchedule ({ periodMs, timers, poll }: PollScheduleOptions): PollSchedule {
  const durations: number[] = []
  let wanted = false
  let closed = false
  let polling = false
  let cancel: (() => void) | undefined

  function schedule (delayMs: number): void {
    if (!wanted || closed || polling || cancel !== undefined) return
    cancel = timers.setTimeout(run, delayMs)
  }

  function run (): void {
    cancel = undefined
    polling = true
    const started = timers.now()
    poll().finally(() => {
      polling = false
      const took = timers.now() - started
      durations.push(took)
      if (durations.length > RECENT_READS) durations.shift()
      schedule(Math.max(0, periodMs - Math.max(...durations) - took))
    }).catch(() => {})
  }

  return {
    setWanted (on) {
      wanted = on
      if (on) schedule(periodMs - Math.max(0, ...durations))
      else {
        cancel?.()
        cancel = undefined
      }
    },
    close () {
      closed = true
      cancel?.()
      cancel = undefined
    }
  }
}
