// One source of changes, any number of subscribers: the post API's own state tracker, or at the
// front the one upstream stream it holds, feeds the hub; each subscriber (an SSE response) gets
// every change in order, a heartbeat, and on resuming the gap as one event.
//
// Back-pressure: a subscriber whose socket does not take more (`write` returned false) is sent
// nothing until it drains; what it owes is then one event, the gap from the last state it was
// sent to the head, computed from the shared log (or `sync-expired` when that state fell out of
// the log). So a slow subscriber costs one token and what its socket already buffers, whatever
// the rate of changes; one that stays stalled for `stalledBeats` heartbeats is disconnected, and
// resumes from its Last-Event-ID when it reconnects.
import type { Change } from './change.js'
import { createChangeLog, type ChangeLog } from './change-log.js'
import { changeFrame, HEARTBEAT_FRAME, positionFrame, syncExpiredFrame } from './sse-frame.js'
import { isStateToken } from './state-token.js'
import { realTimers, type Timers } from '../lib/timers.js'

/** What a subscriber's frames are written to: a node:http ServerResponse fits. */
export interface EventSink {
  /** false: the buffer is full; wait for 'drain'. */
  write: (chunk: Buffer) => boolean
  once: (event: 'drain', listener: () => void) => unknown
  /** Ends the stream (the hub is closing). */
  end: () => unknown
  /** Drops the connection (the subscriber stalled for too long). */
  destroy: () => unknown
}

export interface Subscription {
  /** Stops writing to the sink (call it when the connection closes). */
  close: () => void
}

export interface ChangeHubOptions {
  log?: ChangeLog
  timers?: Timers
  /** Between two heartbeat comments; a stream carries something at least this often. */
  heartbeatMs?: number
  /** Heartbeats a stalled subscriber is given to drain before it is disconnected. */
  stalledBeats?: number
  /** Told when the first subscriber arrives (true) and the last one leaves (false): the front opens and closes its upstream stream, the post API starts and stops tracking. */
  onActiveChange?: (active: boolean) => void
}

export const DEFAULT_HEARTBEAT_MS = 15_000
const DEFAULT_STALLED_BEATS = 4

export interface ChangeHub {
  readonly log: ChangeLog
  /** Records `change` and sends it to every subscriber (a change that changes nothing is dropped). */
  publish: (change: Change) => void
  /** Starts again at `token` (a first state, or a source that lost track): subscribers elsewhere get `sync-expired`. */
  reset: (token: string) => void
  /**
   * Adds a subscriber that holds the state `from` (its Last-Event-ID, or the `since` it asked
   * for): it first gets the gap from there to the head as one event, or `sync-expired`, or at the
   * head an `id` naming it (a relay learns where it is); without `from`, an `id` naming the head.
   * Before the hub has a head, it waits for one, then is sent the same.
   */
  subscribe: (sink: EventSink, from?: string) => Subscription
  readonly subscribers: number
  /**
   * While the hub has no head (a front that just started), the state its first subscriber that
   * named a well-formed one holds: the relay resumes upstream from there, so that client gets its gap rather
   * than `sync-expired` when the upstream still holds that state.
   */
  readonly waitingFrom: string | undefined
  /** Ends every stream and stops the heartbeat. */
  close: () => void
}

interface Subscriber {
  sink: EventSink
  /** The state the frames sent so far leave the client in (at first, the one it resumes from). */
  position: string | undefined
  /** Whether it was sent a frame naming its position: one that resumed at the head is told it is there. */
  told: boolean
  stalled: boolean
  stalledBeats: number
}

export function createChangeHub (options: ChangeHubOptions = {}): ChangeHub {
  const log = options.log ?? createChangeLog()
  const timers = options.timers ?? realTimers
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS
  const stalledBeats = options.stalledBeats ?? DEFAULT_STALLED_BEATS
  const subscribers = new Set<Subscriber>()
  // The frames that lead from each position to the head, built once for every subscriber there
  // (a change goes to a thousand subscribers as one buffer); cleared whenever the log moves.
  const frames = new Map<string, Buffer>()
  let stopHeartbeat: (() => void) | undefined

  function frameFrom (position: string | undefined, head: string): Buffer {
    const key = position ?? ''
    let frame = frames.get(key)
    if (frame === undefined) {
      const latest = log.latest
      if (position === undefined) frame = positionFrame(head)
      else if (latest?.since === position) frame = changeFrame(latest)
      else {
        const gap = log.since(position)
        frame = gap === undefined ? syncExpiredFrame(head) : changeFrame(gap)
      }
      frames.set(key, frame)
    }
    return frame
  }

  function send (subscriber: Subscriber, frame: Buffer): void {
    if (subscriber.sink.write(frame)) return
    subscriber.stalled = true
    subscriber.sink.once('drain', () => {
      subscriber.stalled = false
      subscriber.stalledBeats = 0
      if (subscribers.has(subscriber)) catchUp(subscriber)
    })
  }

  function catchUp (subscriber: Subscriber): void {
    const head = log.head
    if (subscriber.stalled || head === undefined || (subscriber.position === head && subscriber.told)) return
    // At the head but told nothing yet (it resumed there, perhaps before the hub had a head, as
    // at a front that just restarted): an `id` naming it, as for one that named no state.
    const frame = frameFrom(subscriber.position === head ? undefined : subscriber.position, head)
    subscriber.position = head
    subscriber.told = true
    send(subscriber, frame)
  }

  function logMoved (): void {
    frames.clear()
    for (const subscriber of subscribers) catchUp(subscriber)
  }

  function beat (): void {
    for (const subscriber of subscribers) {
      if (!subscriber.stalled) send(subscriber, HEARTBEAT_FRAME)
      else if (++subscriber.stalledBeats >= stalledBeats) {
        remove(subscriber)
        subscriber.sink.destroy()
      }
    }
    if (subscribers.size > 0) stopHeartbeat = timers.setTimeout(beat, heartbeatMs)
  }

  function remove (subscriber: Subscriber): void {
    if (!subscribers.delete(subscriber) || subscribers.size > 0) return
    stopHeartbeat?.()
    stopHeartbeat = undefined
    options.onActiveChange?.(false)
  }

  return {
    log,
    publish (change) {
      const before = log.latest
      log.append(change)
      if (log.latest !== before) logMoved()
    },
    reset (token) {
      log.reset(token)
      logMoved()
    },
    subscribe (sink, from) {
      const subscriber: Subscriber = { sink, position: from, told: false, stalled: false, stalledBeats: 0 }
      subscribers.add(subscriber)
      if (subscribers.size === 1) {
        stopHeartbeat = timers.setTimeout(beat, heartbeatMs)
        options.onActiveChange?.(true)
      }
      catchUp(subscriber)
      return { close: () => remove(subscriber) }
    },
    get subscribers () { return subscribers.size },
    get waitingFrom () {
      if (log.head !== undefined) return undefined
      for (const { position } of subscribers) if (position !== undefined && isStateToken(position)) return position
      return undefined
    },
    close () {
      for (const subscriber of [...subscribers]) {
        remove(subscriber)
        subscriber.sink.end()
      }
    }
  }
}
