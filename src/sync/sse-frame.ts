// Server-sent events as they go on the wire (the HTML standard's "event stream" format): the
// frames the change stream writes, encoded once and shared by every subscriber they go to.
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
import { problemDocument } from '../contract/problems.js'
import { changeJson, type Change } from './change.js'

export const EVENT_STREAM_TYPE = 'text/event-stream'

/** The event a client gets instead of a change when the state it holds is no longer known. */
export const SYNC_EXPIRED_EVENT = 'sync-expired'

export interface SseEvent {
  /** Becomes the client's last event ID, sent back as `Last-Event-ID` when it reconnects. */
  id?: string
  /** The event type; without one, a browser dispatches a `message` event. */
  event?: string
  data?: string
}

// A field's value ends at a line break, and a browser ignores an `id` holding NUL.
const UNSAFE_IN_FIELD = /[\r\n\0]/

/** One event, ended by the blank line that dispatches it; `data` may span lines. */
export function formatEvent ({ id, event, data }: SseEvent): string {
  let frame = ''
  if (id !== undefined) {
    if (UNSAFE_IN_FIELD.test(id)) throw new RangeError('an event id cannot hold a line break or NUL')
    frame += `id: ${id}\n`
  }
  if (event !== undefined) {
    if (UNSAFE_IN_FIELD.test(event)) throw new RangeError('an event type cannot hold a line break or NUL')
    frame += `event: ${event}\n`
  }
  if (data !== undefined) for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`
  return `${frame}\n`
}

/** A comment line: ignored by clients, it keeps idle connections (and proxies) from timing out. */
export function formatComment (text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`
}

/** A change: `id` its `until` token. */
export function changeFrame (change: Change): Buffer {
  return Buffer.from(formatEvent({ id: change.until, data: JSON.stringify(changeJson(change)) }))
}

/**
 * An `id` alone: the client's last event ID becomes `head` without any event being dispatched,
 * so a client that connected without a token and reconnects resumes from where it joined.
 */
export function positionFrame (head: string): Buffer {
  return Buffer.from(formatEvent({ id: head }))
}

/** Why a token gets `sync-expired`, in the 410 answer and in the stream's event alike. */
export const SYNC_EXPIRED_DETAIL = 'The state this token names is not held here (too old, or from before a restart): fetch the whole list again (without since), then follow from its token.'

/** The state the client holds is not known here: it starts again from the whole list. `id` is the head. */
export function syncExpiredFrame (head: string): Buffer {
  return Buffer.from(formatEvent({ id: head, event: SYNC_EXPIRED_EVENT, data: JSON.stringify(problemDocument('sync-expired', SYNC_EXPIRED_DETAIL)) }))
}

export const HEARTBEAT_FRAME = Buffer.from(formatComment('heartbeat'))
