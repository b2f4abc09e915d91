// Waiting for a condition that becomes true by itself (a server started, sockets released, a
// store recovered): asked again every `everyMs` until it holds, or the test fails after `withinMs`.
import { setTimeout as sleep } from 'node:timers/promises'

export interface PollOptions {
  withinMs?: number
  everyMs?: number
}

/**
 * Calls `check` until it returns something other than `false` or `undefined`, and returns that.
 * `what` names the awaited condition in the failure message, with `check`'s last error if it threw.
 */
export async function pollUntil<T> (what: string, check: () => T | false | undefined | Promise<T | false | undefined>, { withinMs = 5000, everyMs = 20 }: PollOptions = {}): Promise<T> {
  const deadline = performance.now() + withinMs
  for (;;) {
    let last: unknown
    try {
      const result = await check()
      if (result !== false && result !== undefined) return result
    } catch (err) {
      last = err
    }
    if (performance.now() > deadline) {
      throw new Error(`${what}: not within ${withinMs} ms${last === undefined ? '' : ` (last: ${String(last)})`}`, { cause: last })
    }
    await sleep(everyMs)
  }
}
