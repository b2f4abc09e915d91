// The change stream as an HTTP response: `GET …changes` with `Accept: text/event-stream` turns
// the response into a subscriber of a hub, for as long as the client stays.
import type { ServerResponse } from 'node:http'
import type { ChangeHub } from './change-hub.js'
import { EVENT_STREAM_TYPE } from './sse-frame.js'

/** Whether the client asks for the event stream rather than JSON. */
export function wantsEventStream (accept: string | undefined): boolean {
  return accept !== undefined && accept.toLowerCase().includes(EVENT_STREAM_TYPE)
}

/**
 * Where a subscriber resumes: `Last-Event-ID` (a browser's EventSource sends it when it
 * reconnects, and it is newer than the URL it keeps reusing) before the `since` it asked for.
 */
export function resumeFrom (lastEventId: string | string[] | undefined, since: string | undefined): string | undefined {
  return typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : since
}

export interface EventStreamOptions {
  /** The state the client holds (resumeFrom). */
  from?: string
  /** Headers the app adds to every answer (CORS, security, request id): a hijacked response bypasses its hooks. */
  headers?: Record<string, string>
}

/** Answers 200 with an event stream fed by `hub` until the client goes or the hub closes. */
export function openEventStream (res: ServerResponse, hub: ChangeHub, { from, headers = {} }: EventStreamOptions = {}): void {
  res.writeHead(200, {
    ...headers,
    'content-type': EVENT_STREAM_TYPE,
    // Every stream is its own: never stored, never transformed (a compressing proxy would
    // buffer the events), and nginx is told not to buffer it either.
    'cache-control': 'no-store, no-transform',
    'x-accel-buffering': 'no'
  })
  res.flushHeaders()
  // Nagle's algorithm would hold a small event back until the previous one is acknowledged.
  res.socket?.setNoDelay(true)
  const subscription = hub.subscribe(res, from)
  res.once('close', () => subscription.close())
}
