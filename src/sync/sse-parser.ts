// Reads an event stream as a browser does (the HTML standard's interpretation rules), a chunk at
// a time: what the front uses to follow the post API's stream, with a bound on how much one
// event may hold, since a peer's stream is not trusted to end its lines.
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

export interface ParsedEvent {
  /** `message` when the stream named no type. */
  type: string
  /** undefined for a block that only set the last event ID (`id:` and no `data:`). */
  data: string | undefined
  /** The last event ID after this block (as a browser's `lastEventId`). */
  lastEventId: string
}

/**
 * The longest event accepted by default: more than a change that touches 10,000 posts of long
 * slugs, or the longest gap a post API's change log can hold.
 */
export const DEFAULT_MAX_EVENT_CHARS = 16 << 20

/** A line or an event longer than the parser accepts. */
export class EventTooLargeError extends Error {
  constructor (limit: number) {
    super(`an event stream line or event exceeded ${limit} characters`)
    this.name = 'EventTooLargeError'
  }
}

export interface EventStreamParser {
  /** Reads the next bytes; `onEvent` is called for each block they complete. */
  push: (chunk: Uint8Array | string) => void
  /** The reconnection time the stream asked for (`retry:`), if any. */
  readonly retryMs: number | undefined
}

/**
 * `onEvent` gets every dispatched event, and also blocks with an `id:` but no data (a browser
 * dispatches nothing for those, yet takes the id): a follower needs to know where it stands.
 */
export function createEventStreamParser (onEvent: (event: ParsedEvent) => void, { maxChars = DEFAULT_MAX_EVENT_CHARS } = {}): EventStreamParser {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false })
  let buffer = ''
  let afterCr = false
  let type = ''
  let data: string[] | undefined
  let dataChars = 0
  let lastEventId = ''
  let idSeen = false
  let retryMs: number | undefined

  function line (text: string): void {
    if (text === '') {
      if (data !== undefined || idSeen) onEvent({ type: type === '' ? 'message' : type, data: data?.join('\n'), lastEventId })
      type = ''
      data = undefined
      dataChars = 0
      idSeen = false
      return
    }
    if (text.startsWith(':')) return
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'event': type = value; break
      case 'data':
        dataChars += value.length + 1
        if (dataChars > maxChars) throw new EventTooLargeError(maxChars)
        ;(data ??= []).push(value)
        break
      case 'id':
        if (!value.includes('\0')) {
          lastEventId = value
          idSeen = true
        }
        break
      case 'retry': if (/^\d+$/.test(value)) retryMs = Number(value)
    }
  }

  return {
    push (chunk) {
      buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
      let start = 0
      // A CR ending the previous chunk already ended its line: a LF right after it is part of it.
      if (afterCr && buffer.startsWith('\n')) start = 1
      afterCr = false
      const lineBreak = /[\r\n]/g
      lineBreak.lastIndex = start
      for (let found = lineBreak.exec(buffer); found !== null; found = lineBreak.exec(buffer)) {
        const at = found.index
        line(buffer.slice(start, at))
        start = at + 1
        if (buffer[at] === '\r') {
          if (start === buffer.length) afterCr = true
          else if (buffer[start] === '\n') start++
        }
        lineBreak.lastIndex = start
      }
      buffer = buffer.slice(start)
      if (buffer.length > maxChars) throw new EventTooLargeError(maxChars)
    },
    get retryMs () { return retryMs }
  }
}
