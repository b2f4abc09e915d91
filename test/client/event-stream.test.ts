// The client's event stream reader (packages/client/src/event-stream.ts): it reads whatever the
// front writes, however the text is cut, as the server's own reader (tested against the HTML
// standard) does, except that, as in a browser, an event without data is not dispatched and only
// moves the last event ID.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { createEventStreamReader, MAX_EVENT_CHARS, type StreamEvent } from '../../packages/client/src/event-stream.js'
import { createEventStreamParser, type ParsedEvent } from '../../src/sync/sse-parser.js'
import { changeFrame, positionFrame, syncExpiredFrame, HEARTBEAT_FRAME } from '../../src/sync/sse-frame.js'

function readAll (chunks: string[]): { events: StreamEvent[], lastEventId: string } {
  const reader = createEventStreamReader()
  const events = chunks.flatMap((chunk) => reader.push(chunk))
  return { events, lastEventId: reader.lastEventId }
}

/** `text` cut at the given offsets. */
function cut (text: string, offsets: number[]): string[] {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b)
  return [0, ...points].map((start, i) => text.slice(start, points[i] ?? text.length))
}

// Streams made of the pieces that matter: field names, colons, spaces, line breaks of every kind, NUL.
const piece = fc.constantFrom('data', 'id', 'event', 'retry', 'x', ':', ' ', '1', 'é', '\n', '\r', '\r\n', '\0', 'sync-expired')

test('any stream, cut anywhere, reads as the server\'s reader reads it', () => {
  fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, offsets) => {
    const text = pieces.join('')
    const expected: ParsedEvent[] = []
    const parser = createEventStreamParser((event) => expected.push(event))
    parser.push(Buffer.from(text))
    const { events, lastEventId } = readAll(cut(text, offsets))
    assert.deepEqual(events, expected.filter((event) => event.data !== undefined && event.data !== null))
    assert.equal(lastEventId, expected.at(-1)?.lastEventId ?? lastEventId)
  }), { numRuns: 3000 })
})

test('the frames the front writes: a change, a position, sync-expired, heartbeats', () => {
  const change = { since: 'a', until: 'b', upserted: ['x'], deleted: ['y'] }
  const stream = [positionFrame('a'), HEARTBEAT_FRAME, changeFrame(change), syncExpiredFrame('c')].map((frame) => frame.toString()).join('')
  const reader = createEventStreamReader('start')
  assert.equal(reader.lastEventId, 'start')
  assert.deepEqual(reader.push(stream.slice(0, 9)), [])
  assert.equal(reader.lastEventId, 'a', 'an id alone moves the last event ID')
  const events = reader.push(stream.slice(9))
  assert.deepEqual(events.map(({ type, lastEventId }) => [type, lastEventId]), [['message', 'b'], ['sync-expired', 'c']])
  assert.deepEqual(JSON.parse(events[0]?.data ?? ''), change)
  reader.push('retry: 2500\nretry: soon\n')
  assert.equal(reader.retryMs, 2500)
})

test('CR, LF and CRLF end lines, even a CRLF split between chunks; an endless line or event is refused', () => {
  for (const chunks of [['data: a\r\ndata: b\r\n\r\n'], ['data: a\r', '\ndata: b\r', '\n\r', '\n'], ['data: a\rdata: b\r\r'], ['data: a\ndata: b\n\n']]) {
    assert.deepEqual(readAll(chunks).events, [{ type: 'message', data: 'a\nb', lastEventId: '' }], JSON.stringify(chunks))
  }
  assert.throws(() => createEventStreamReader().push('data: ' + 'x'.repeat(MAX_EVENT_CHARS)), RangeError)
  const reader = createEventStreamReader()
  assert.throws(() => { for (let i = 0; i < 1100; i++) reader.push(`data: ${'x'.repeat(1000)}\n`) }, RangeError)
})
