// The front's one upstream stream: follows the post API's change stream into a hub that serves
// any number of the front's own subscribers. When the stream ends, fails, goes silent for longer
// than a few heartbeats, or carries something that is not a change, it is opened again (through
// `connect`, which may pick another upstream) from the hub's head, so nothing is missed: the
// upstream answers the gap as one event, or `sync-expired`, which the hub passes on. A hub with
// no head yet (a front just started) opens it from its first client's Last-Event-ID.
import { parseChange } from './change.js'
import type { ChangeHub } from './change-hub.js'
import { DEFAULT_HEARTBEAT_MS } from './change-hub.js'
import { SYNC_EXPIRED_EVENT } from './sse-frame.js'
import { createEventStreamParser, type ParsedEvent } from './sse-parser.js'
import { isStateToken } from './state-token.js'
import { realTimers, type Timers } from '../lib/timers.js'

/** The upstream sent something that is not part of a change stream. */
export class BadUpstreamEventError extends Error {
  constructor (what: string) {
    super(`the upstream change stream sent ${what}`)
    this.name = 'BadUpstreamEventError'
  }
}

export interface RelayOptions {
  hub: ChangeHub
  /**
   * Opens the upstream stream, resuming after `lastEventId` (send it as `Last-Event-ID`), and
   * resolves with its body; `signal` aborts it. Rejects, or the body fails, on any fault.
   */
  connect: (lastEventId: string | undefined, signal: AbortSignal) => Promise<AsyncIterable<Uint8Array>>
  timers?: Timers
  /** Silence after which the upstream is taken for gone: a few of its heartbeats. */
  idleMs?: number
  /** Waits between attempts: from `minRetryMs`, doubling up to `maxRetryMs`, each jittered. */
  minRetryMs?: number
  maxRetryMs?: number
  random?: () => number
  /** Told about each failed attempt (for the log). */
  onError?: (err: unknown) => void
}

export interface Relay {
  /** Stops following: aborts the stream and any wait. */
  close: () => void
}

export function startRelay (options: RelayOptions): Relay {
  const { hub, connect } = options
  const timers = options.timers ?? realTimers
  const idleMs = options.idleMs ?? 3 * DEFAULT_HEARTBEAT_MS
  const minRetryMs = options.minRetryMs ?? 100
  const maxRetryMs = options.maxRetryMs ?? 5000
  const random = options.random ?? Math.random
  const state = { closed: false }
  let attempt: AbortController | undefined
  let cancelWait: (() => void) | undefined

  function accept (event: ParsedEvent): void {
    const token = event.lastEventId
    if (event.type === SYNC_EXPIRED_EVENT || event.data === undefined) {
      // The upstream does not know the hub's head (or the hub had none): start again at its head.
      if (!isStateToken(token)) throw new BadUpstreamEventError('an event without a valid id')
      if (hub.log.head !== token) hub.reset(token)
      return
    }
    if (event.type !== 'message') throw new BadUpstreamEventError(`an event of type ${event.type}`)
    let change
    try {
      change = parseChange(JSON.parse(event.data))
    } catch {}
    if (change === undefined || change.until !== token) throw new BadUpstreamEventError('an event that is not a change')
    hub.publish(change)
  }

  /** Follows one upstream stream until it ends or fails; resolves true when it carried anything. */
  async function follow (controller: AbortController): Promise<boolean> {
    let cancelIdle: (() => void) | undefined
    const watch = (): void => {
      cancelIdle?.()
      cancelIdle = timers.setTimeout(() => controller.abort(new Error(`the upstream change stream was silent for ${idleMs} ms`)), idleMs)
    }
    let received = false
    try {
      watch()
      // A hub with no head yet resumes from where its first client is: the upstream answers that
      // client's gap when it still holds the state (after a restart of this front), else sync-expired.
      const body = await connect(hub.log.head ?? hub.waitingFrom, controller.signal)
      const parser = createEventStreamParser(accept)
      for await (const chunk of body) {
        watch()
        received = true
        parser.push(chunk)
      }
    } catch (err) {
      if (!state.closed) options.onError?.(controller.signal.aborted ? controller.signal.reason : err)
    } finally {
      cancelIdle?.()
      controller.abort()
    }
    return received
  }

  async function run (): Promise<void> {
    let waitMs = minRetryMs
    while (!state.closed) {
      attempt = new AbortController()
      if (await follow(attempt)) waitMs = minRetryMs
      if (state.closed) break
      // Half the wait, plus up to as much again at random: followers of a failed upstream spread out.
      await new Promise<void>((resolve) => {
        const done = (): void => { cancelWait = undefined; resolve() }
        const cancel = timers.setTimeout(done, waitMs / 2 + random() * waitMs / 2)
        cancelWait = () => { cancel(); done() }
      })
      waitMs = Math.min(maxRetryMs, waitMs * 2)
    }
  }

  run().catch((err: unknown) => options.onError?.(err))
  return {
    close () {
      state.closed = true
      attempt?.abort()
      cancelWait?.()
    }
  }
}
