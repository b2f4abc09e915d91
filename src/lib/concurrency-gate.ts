// At most `limit` tasks at a time; the next ones wait their turn in a bounded queue, each for a
// bounded time, and are refused (GateRefusedError) when the queue is full or their wait runs out.
// Turns are given in arrival order. A refused task never runs.

export interface GateOptions {
  /** Tasks running at once. */
  limit: number
  /** Tasks waiting at once; one more is refused at once. */
  maxQueue: number
  /** Longest wait for a turn; then the task is refused. */
  maxWaitMs: number
  /** Calls `callback` once, `ms` from now; returns what cancels it (injected: tests move time themselves). */
  setTimeout: (callback: () => void, ms: number) => () => void
}

export class GateRefusedError extends Error {
  /** Why: no room to wait, or no turn within maxWaitMs. */
  readonly reason: 'queue-full' | 'wait-expired'

  constructor (reason: 'queue-full' | 'wait-expired') {
    super(reason === 'queue-full' ? 'too many tasks waiting' : 'no turn in time')
    this.name = 'GateRefusedError'
    this.reason = reason
  }
}

export interface ConcurrencyGate {
  /** Runs `task` when a turn is free; rejects with GateRefusedError, without running it, when none comes. */
  run: <T>(task: () => Promise<T>) => Promise<T>
  /**
   * Waits for a turn as `run` does, and resolves with what gives it back, for a turn held across
   * something that is no one promise (a stream): the first call gives it back, later ones nothing.
   */
  enter: () => Promise<() => void>
  /** Tasks running now. */
  readonly running: number
  /** Tasks waiting now. */
  readonly waiting: number
}

interface Waiter {
  start: () => void
  cancelTimer: () => void
}

export function createConcurrencyGate ({ limit, maxQueue, maxWaitMs, setTimeout }: GateOptions): ConcurrencyGate {
  let running = 0
  const queue: Waiter[] = []

  function release (): void {
    const next = queue.shift()
    if (next === undefined) {
      running--
      return
    }
    // The turn passes straight to the next task: `running` stays the same.
    next.cancelTimer()
    next.start()
  }

  async function turn (): Promise<void> {
    if (running < limit) {
      running++
      return
    }
    if (queue.length >= maxQueue) throw new GateRefusedError('queue-full')
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        cancelTimer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1)
          reject(new GateRefusedError('wait-expired'))
        }, maxWaitMs)
      }
      queue.push(waiter)
    })
  }

  async function enter (): Promise<() => void> {
    await turn()
    let held = true
    return () => {
      if (!held) return
      held = false
      release()
    }
  }

  return {
    async run (task) {
      const leave = await enter()
      try {
        return await task()
      } finally {
        leave()
      }
    },
    enter,
    get running () {
      return running
    },
    get waiting () {
      return queue.length
    }
  }
}
