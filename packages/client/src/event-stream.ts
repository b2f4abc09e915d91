// A reader of server-sent events, by the HTML standard's rules for interpreting an event stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
// fed decoded text in chunks cut anywhere, it hands back each dispatched event. The client's own,
// small, so that the package keeps no dependency and works where EventSource cannot set headers.

export interface StreamEvent {
  /** The event type: `message` unless the stream named one. */
  type: string
  data: string
  /** The last event ID once this event is dispatched (its own `id:`, or the one before). */
  lastEventId: string
}

/** Characters of one event (its lines and data) at most: a stream that sends more is broken. */
export const MAX_EVENT_CHARS = 1024 * 1024

export interface EventStreamReader {
  /** The events `text` completes, in order; throws a RangeError when one passes MAX_EVENT_CHARS. */
  push: (text: string) => StreamEvent[]
  /** The last event ID, updated by every dispatch, even of an event without data (a bare `id:`). */
  readonly lastEventId: string
  /** The reconnection time the stream asked for (`retry:`), in milliseconds, if any. */
  readonly retryMs: number | undefined
}

export function createEventStreamReader (lastEventId = ''): EventStreamReader {
  let pending = ''
  // A CR ended the last chunk: an LF opening the next belongs to the same line break.
  let afterCr = false
  let data = ''
  let type = ''
  let idBuffer = lastEventId
  let dispatchedId = lastEventId
  let retryMs: number | undefined

  function line (text: string, events: StreamEvent[]): void {
    if (text === '') {
      dispatchedId = idBuffer
      if (data !== '') events.push({ type: type === '' ? 'message' : type, data: data.slice(0, -1), lastEventId: dispatchedId })
      data = ''
      type = ''
      return
    }
    if (text.startsWith(':')) return
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data += `${value}\n`
    else if (field === 'event') type = value
    else if (field === 'id' && !value.includes('\0')) idBuffer = value
    else if (field === 'retry' && /^[0-9]+$/.test(value)) retryMs = Number(value)
    if (data.length > MAX_EVENT_CHARS) throw new RangeError(`an event of more than ${MAX_EVENT_CHARS} characters`)
  }

  return {
    push (text) {
      const events: StreamEvent[] = []
      let start = 0
      if (afterCr && text.startsWith('\n')) start = 1
      afterCr = false
      for (let i = start; i < text.length; i++) {
        const char = text[i]
        if (char !== '\n' && char !== '\r') continue
        line(pending + text.slice(start, i), events)
        pending = ''
        if (char === '\r' && text[i + 1] === '\n') i++
        else if (char === '\r' && i + 1 === text.length) afterCr = true
        start = i + 1
      }
      pending += text.slice(start)
      if (pending.length > MAX_EVENT_CHARS) throw new RangeError(`a line of more than ${MAX_EVENT_CHARS} characters`)
      return events
    },
    get lastEventId () { return dispatchedId },
    get retryMs () { return retryMs }
  }
}
