// Which upstreams are in rotation. Calls go to the upstream in rotation with the
// fewest calls pending, round-robin among equals. One that refuses, breaks or lets calls time out
// `ejectFailures` times in a row leaves rotation and is probed every `probeIntervalMs`; the first
// probe it answers, or the first call it answers (other than 503), brings it back. While none is
// in rotation, calls go to every upstream as if all were (panic routing, as Envoy's panic
// threshold): refusing every call would turn an upstream that answers 503 or is merely slow
// into a 502 it never sent, and keep a recovered one waiting for its next probe.
import { ProblemError } from '../../contract/problems.js'
import { realTimers, type Timers } from '../../lib/timers.js'

export interface UpstreamPoolOptions<T> {
  upstreams: readonly T[]
  /** Consecutive failures that take an upstream out of rotation (0: never). */
  ejectFailures: number
  probeIntervalMs: number
  /** Resolves undefined when the upstream answered, or with the problem that keeps it out. */
  probe: (upstream: T, stop: AbortSignal) => Promise<ProblemError | undefined>
  /** Told when an upstream leaves rotation (with the failure that took it out) or comes back. */
  onChange?: (upstream: T, inRotation: boolean, failure: ProblemError | undefined) => void
  /** The timers of the probes; the process's by default. */
  timers?: Timers
}

export interface PoolMember<T> {
  readonly upstream: T
  /** Calls under way on this upstream; whoever sends one counts it here. */
  pending: number
}

export interface UpstreamPool<T> {
  /**
   * The upstream for the next call, other than `except`: one in rotation, or with none in
   * rotation any (panic routing); undefined only when `except` is the one upstream.
   */
  pick: (except?: PoolMember<T>) => PoolMember<T> | undefined
  /** The upstream in rotation for which `test` holds, if any. */
  find: (test: (upstream: T) => boolean) => PoolMember<T> | undefined
  /**
   * How a call to `member` ended: `failure` when nobody answered usefully, else it answered;
   * `serving` false for an answer that shows it there but not serving (a 503), which neither
   * counts against it nor brings it back into rotation.
   */
  record: (member: PoolMember<T>, failure?: ProblemError, serving?: boolean) => void
  /** `problem` of a call made while no upstream was in rotation: said so, with a Retry-After of one probe interval. */
  duringOutage: (problem: ProblemError) => ProblemError
  /** Upstreams in rotation now. */
  inRotation: () => number
  /** Stops probing. */
  close: () => void
}

interface Member<T> extends PoolMember<T> {
  inRotation: boolean
  consecutiveFailures: number
  /** Cancels the probe waiting for its time, if one does. */
  cancelProbe: (() => void) | undefined
  /** A probe is under way. */
  probing: boolean
}

export function createUpstreamPool<T> ({ upstreams, ejectFailures, probeIntervalMs, probe, onChange, timers = realTimers }: UpstreamPoolOptions<T>): UpstreamPool<T> {
  if (upstreams.length === 0) throw new Error('an upstream pool needs at least one upstream')
  const members: Array<Member<T>> = upstreams.map((upstream) => ({
    upstream, pending: 0, inRotation: true, consecutiveFailures: 0, cancelProbe: undefined, probing: false
  }))
  const stop = new AbortController()
  let next = 0

  function schedule (member: Member<T>): void {
    if (stop.signal.aborted || member.inRotation || member.probing || member.cancelProbe !== undefined) return
    member.cancelProbe = timers.setTimeout(() => { probeOnce(member).catch(() => {}) }, probeIntervalMs)
  }

  async function probeOnce (member: Member<T>): Promise<void> {
    member.cancelProbe = undefined
    member.probing = true
    const failure = await probe(member.upstream, stop.signal)
    member.probing = false
    if (stop.signal.aborted) return
    if (failure !== undefined) schedule(member)
    else restore(member)
  }

  function restore (member: Member<T>): void {
    member.consecutiveFailures = 0
    if (member.inRotation) return
    member.inRotation = true
    member.cancelProbe?.()
    member.cancelProbe = undefined
    onChange?.(member.upstream, true, undefined)
  }

  function eject (member: Member<T>, failure: ProblemError): void {
    member.inRotation = false
    onChange?.(member.upstream, false, failure)
    schedule(member)
  }

  return {
    pick (except) {
      const panic = members.every((member) => !member.inRotation)
      let chosen: Member<T> | undefined
      let chosenIndex = 0
      for (let i = 0; i < members.length; i++) {
        const index = (next + i) % members.length
        const member = members[index] as Member<T>
        if ((!member.inRotation && !panic) || member === except) continue
        if (chosen === undefined || member.pending < chosen.pending) {
          chosen = member
          chosenIndex = index
        }
      }
      if (chosen !== undefined) next = (chosenIndex + 1) % members.length
      return chosen
    },
    find: (test) => members.find((member) => member.inRotation && test(member.upstream)),
    record (pooled, failure, serving = true) {
      const member = pooled as Member<T>
      if (failure === undefined) {
        if (serving) restore(member)
        else member.consecutiveFailures = 0
        return
      }
      member.consecutiveFailures++
      if (member.inRotation && ejectFailures > 0 && member.consecutiveFailures >= ejectFailures) eject(member, failure)
    },
    duringOutage (problem) {
      return new ProblemError(problem.kind, `${problem.message} No upstream is in rotation: each is still tried, and probed.`, {
        cause: problem,
        retryAfter: Math.max(1, Math.ceil(probeIntervalMs / 1000))
      })
    },
    inRotation: () => members.filter((member) => member.inRotation).length,
    close () {
      stop.abort()
      for (const member of members) member.cancelProbe?.()
    }
  }
}
