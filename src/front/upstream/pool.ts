// Which upstreams are in rotation (SPEC "Scale"). Calls go to the upstream in rotation with the
// fewest calls pending, round-robin among equals. One that refuses, breaks or lets calls time out
// `ejectFailures` times in a row leaves rotation and is probed every `probeIntervalMs`; the first
// probe it answers brings it back. The last upstream leaves too: while none is in rotation, calls
// fail at once with the problem that took them out, and the first to answer a probe serves again
// (within one probe interval of its return, instead of a blind back-off).
import { ProblemError } from '../../contract/problems.js'

export interface UpstreamPoolOptions<T> {
  upstreams: readonly T[]
  /** Consecutive failures that take an upstream out of rotation (0: never). */
  ejectFailures: number
  probeIntervalMs: number
  /** Resolves undefined when the upstream answered, or with the problem that keeps it out. */
  probe: (upstream: T, stop: AbortSignal) => Promise<ProblemError | undefined>
  /** Told when an upstream leaves rotation (with the failure that took it out) or comes back. */
  onChange?: (upstream: T, inRotation: boolean, failure: ProblemError | undefined) => void
}

export interface PoolMember<T> {
  readonly upstream: T
  /** Calls under way on this upstream; whoever sends one counts it here. */
  pending: number
}

export interface UpstreamPool<T> {
  /** The upstream for the next call, other than `except`; undefined when none is in rotation. */
  pick: (except?: PoolMember<T>) => PoolMember<T> | undefined
  /** The upstream in rotation for which `test` holds, if any. */
  find: (test: (upstream: T) => boolean) => PoolMember<T> | undefined
  /** How a call to `member` ended: `failure` when nobody answered usefully, else it answered. */
  record: (member: PoolMember<T>, failure?: ProblemError) => void
  /** The problem to fail fast with while no upstream is in rotation. */
  outage: () => ProblemError
  /** Upstreams in rotation now. */
  inRotation: () => number
  /** Stops probing. */
  close: () => void
}

interface Member<T> extends PoolMember<T> {
  inRotation: boolean
  consecutiveFailures: number
  probeTimer: NodeJS.Timeout | undefined
}

export function createUpstreamPool<T> ({ upstreams, ejectFailures, probeIntervalMs, probe, onChange }: UpstreamPoolOptions<T>): UpstreamPool<T> {
  if (upstreams.length === 0) throw new Error('an upstream pool needs at least one upstream')
  const members: Array<Member<T>> = upstreams.map((upstream) => ({
    upstream, pending: 0, inRotation: true, consecutiveFailures: 0, probeTimer: undefined
  }))
  const stop = new AbortController()
  let next = 0
  /** The failure of the last upstream to leave rotation, or of its latest probe. */
  let lastFailure: ProblemError | undefined

  function schedule (member: Member<T>): void {
    if (stop.signal.aborted) return
    member.probeTimer = setTimeout(() => { probeOnce(member).catch(() => {}) }, probeIntervalMs).unref()
  }

  async function probeOnce (member: Member<T>): Promise<void> {
    member.probeTimer = undefined
    const failure = await probe(member.upstream, stop.signal)
    if (stop.signal.aborted) return
    if (failure !== undefined) {
      lastFailure = failure
      schedule(member)
      return
    }
    member.inRotation = true
    member.consecutiveFailures = 0
    onChange?.(member.upstream, true, undefined)
  }

  function eject (member: Member<T>, failure: ProblemError): void {
    member.inRotation = false
    lastFailure = failure
    onChange?.(member.upstream, false, failure)
    schedule(member)
  }

  return {
    pick (except) {
      let chosen: Member<T> | undefined
      let chosenIndex = 0
      for (let i = 0; i < members.length; i++) {
        const index = (next + i) % members.length
        const member = members[index] as Member<T>
        if (!member.inRotation || member === except) continue
        if (chosen === undefined || member.pending < chosen.pending) {
          chosen = member
          chosenIndex = index
        }
      }
      if (chosen !== undefined) next = (chosenIndex + 1) % members.length
      return chosen
    },
    find: (test) => members.find((member) => member.inRotation && test(member.upstream)),
    record (pooled, failure) {
      const member = pooled as Member<T>
      if (failure === undefined) {
        member.consecutiveFailures = 0
        return
      }
      member.consecutiveFailures++
      if (member.inRotation && ejectFailures > 0 && member.consecutiveFailures >= ejectFailures) eject(member, failure)
    },
    outage () {
      const last = lastFailure ?? new ProblemError('upstream-unreachable', 'The upstream post API could not be reached.')
      return new ProblemError(last.kind, `${last.message} No upstream is in rotation: answering at once until one answers its probe.`, {
        cause: last,
        retryAfter: Math.max(1, Math.ceil(probeIntervalMs / 1000))
      })
    },
    inRotation: () => members.filter((member) => member.inRotation).length,
    close () {
      stop.abort()
      for (const member of members) clearTimeout(member.probeTimer)
    }
  }
}
