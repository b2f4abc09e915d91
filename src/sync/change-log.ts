// The recent states a process has seen, and the changes between them: what answers "what
// changed between the state a client holds and now". Bounded by count and by bytes; a state
// it no longer holds (or never held: another process's, or one from before a restart) is
// expired, never answered with a guess.
import { ChangeFolder, isEmptyChange, type Change } from './change.js'

export interface ChangeLogLimits {
  /** States held at most (the newest included); at least 2. */
  maxStates: number
  /** Estimated bytes of the changes held at most; the newest change is kept whatever its size. */
  maxBytes: number
}

// 1,000 states cover a quarter of an hour of a change a second; 4 MiB holds about three changes
// that touch each of 10,000 posts (an import), or some 50,000 single-post changes.
export const DEFAULT_CHANGE_LOG_LIMITS: ChangeLogLimits = { maxStates: 1000, maxBytes: 4 * 1024 * 1024 }

export interface ChangeLog {
  /** The newest state's token; undefined before the first `reset` or `append`. */
  readonly head: string | undefined
  /** The newest change, the one that led to `head` (undefined after a reset). */
  readonly latest: Change | undefined
  /**
   * Records `change`. When it starts at the head, the states before stay answerable; when it
   * starts elsewhere (the upstream skipped states this log never saw), the log starts again at
   * `change.since`. A change that changes nothing is ignored.
   */
  append: (change: Change) => void
  /** Forgets every state but `token`, which becomes the head. */
  reset: (token: string) => void
  /** The change from `token` to the head (empty when `token` is the head), or undefined when `token` is not held. */
  since: (token: string) => Change | undefined
  /** Held now, for the metrics and the tests. */
  stats: () => { states: number, bytes: number }
}

// What a change costs in memory, roughly: V8 strings (two bytes a character at worst), the
// arrays' slots and the objects around them. An estimate is enough for a bound.
function estimatedBytes (change: Change): number {
  let bytes = 200 + 2 * (change.since.length + change.until.length)
  for (const slug of change.upserted) bytes += 24 + 2 * slug.length
  for (const slug of change.deleted) bytes += 24 + 2 * slug.length
  for (const slug of change.added ?? []) bytes += 24 + 2 * slug.length
  return bytes
}

export function createChangeLog (limits: ChangeLogLimits = DEFAULT_CHANGE_LOG_LIMITS): ChangeLog {
  if (!(limits.maxStates >= 2)) throw new RangeError('a change log holds at least 2 states')
  // states[i] is the token at position first + i; steps[i] leads from states[i] to states[i + 1].
  let states: string[] = []
  let steps: Array<{ change: Change, bytes: number }> = []
  let first = 0
  let bytes = 0
  // Each token's newest position: a state that comes back (a post edited, then restored) is
  // answered from its last visit, the shorter way.
  const positions = new Map<string, number>()

  function evictOldest (): void {
    const token = states.shift() as string
    if (positions.get(token) === first) positions.delete(token)
    bytes -= (steps.shift() as { bytes: number }).bytes
    first++
  }

  function push (token: string): void {
    states.push(token)
    positions.set(token, first + states.length - 1)
  }

  const log: ChangeLog = {
    get head () { return states.at(-1) },
    get latest () { return steps.at(-1)?.change },

    append (change) {
      if (change.since === change.until || isEmptyChange(change)) return
      if (change.since !== log.head) log.reset(change.since)
      const cost = estimatedBytes(change)
      steps.push({ change, bytes: cost })
      bytes += cost
      push(change.until)
      while (steps.length > 1 && (states.length > limits.maxStates || bytes > limits.maxBytes)) evictOldest()
    },

    reset (token) {
      states = []
      steps = []
      positions.clear()
      first = 0
      bytes = 0
      push(token)
    },

    since (token) {
      const position = positions.get(token)
      const head = log.head
      if (position === undefined || head === undefined) return undefined
      const folder = new ChangeFolder()
      for (let i = position - first; i < steps.length; i++) folder.add((steps[i] as { change: Change }).change)
      return folder.result(token, head)
    },

    stats: () => ({ states: states.length, bytes })
  }
  return log
}
