// Event stream framing and reading: whatever events are written, cut into whatever chunks (a
// line break or a UTF-8 character split across two), they read back as written; the reader
// follows the HTML standard's rules for line endings, comments, ids and fields it does not know.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { formatComment, formatEvent, HEARTBEAT_FRAME, type SseEvent } from '../../src/sync/sse-frame.js'
import { createEventStreamParser, EventTooLargeError, type ParsedEvent } from '../../src/sync/sse-parser.js'

function readAll (chunks: Array<Uint8Array | string>, options?: { maxChars: number }): ParsedEvent[] {
  const events: ParsedEvent[] = []
  const parser = createEventStreamParser((event) => events.push(event), options)
  for (const chunk of chunks) parser.push(chunk)
  return events
}

/** `bytes` cut at the given offsets. */
function cut (bytes: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b)
  return [0, ...points].map((start, i) => bytes.subarray(start, points[i] ?? bytes.length))
}

const fieldText = fc.string({ unit: 'grapheme' }).filter((text) => !/[\r\n\0]/.test(text))
const eventArb: fc.Arbitrary<SseEvent & { data: string }> = fc.record({
  id: fc.option(fieldText, { nil: undefined }),
  event: fc.option(fieldText.filter((name) => name !== ''), { nil: undefined }),
  data: fc.string({ unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), fc.constantFrom('\r', '\n', '\r\n')) })
}, { requiredKeys: ['data'] })

test('events written with formatEvent read back the same, however the bytes are cut', () => {
  fc.assert(fc.property(fc.array(eventArb, { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 8 }), (events, offsets) => {
    const bytes = Buffer.from(events.map((event) => formatEvent(event) + formatComment('between')).join(''))
    let lastEventId = ''
    const expected = events.map((event) => {
      lastEventId = event.id ?? lastEventId
      // Line breaks of any kind in the data come back as LF.
      return { type: event.event ?? 'message', data: event.data.replace(/\r\n|\r/g, '\n'), lastEventId }
    })
    assert.deepEqual(readAll(cut(bytes, offsets)), expected)
  }), { numRuns: 2000 })
})

test('CR, LF and CRLF all end lines, even when a CRLF is split between chunks; a leading BOM is dropped', () => {
  const ends = [['data: a\r\ndata: b\r\n\r\n'], ['data: a\r', '\ndata: b\r', '\n\r', '\n'], ['data: a\rdata: b\r\r'], ['data: a\ndata: b\n\n'], ['\ufeffdata: a\ndata: b\n\n']]
  for (const chunks of ends) {
    assert.deepEqual(readAll(chunks.map((chunk) => Buffer.from(chunk))), [{ type: 'message', data: 'a\nb', lastEventId: '' }], JSON.stringify(chunks))
  }
  const euro = Buffer.from('data: €\n\n')
  assert.deepEqual(readAll([euro.subarray(0, 7), euro.subarray(7)]), [{ type: 'message', data: '€', lastEventId: '' }], 'a character split between chunks')
})

test('fields as a browser reads them', () => {
  const events = readAll([
    ': a comment\n',
    'data\n\n', // a field with no colon: empty data, dispatched
    'id: 1\n\n', // an id alone: reported, with no data
    'id: x\0y\ndata: kept\n\n', // an id holding NUL is ignored
    'event: custom\ndata:no space\nunknown: field\n\n',
    'retry: 2500\nretry: soon\n',
    'data: first\ndata: second\n\n',
    'id\ndata: cleared\n\n' // an empty id resets it
  ])
  assert.deepEqual(events, [
    { type: 'message', data: '', lastEventId: '' },
    { type: 'message', data: undefined, lastEventId: '1' },
    { type: 'message', data: 'kept', lastEventId: '1' },
    { type: 'custom', data: 'no space', lastEventId: '1' },
    { type: 'message', data: 'first\nsecond', lastEventId: '1' },
    { type: 'message', data: 'cleared', lastEventId: '' }
  ])
  const parser = createEventStreamParser(() => {})
  parser.push('retry: 2500\nretry: soon\n')
  assert.equal(parser.retryMs, 2500)
  assert.equal(HEARTBEAT_FRAME.toString(), ': heartbeat\n\n')
  assert.equal(formatComment('two\nlines'), ': two lines\n\n')
})

test('an endless line or event is refused, not buffered', () => {
  assert.throws(() => readAll(['data: ' + 'x'.repeat(100)], { maxChars: 50 }), EventTooLargeError)
  assert.throws(() => readAll(Array.from({ length: 10 }, () => 'data: 0123456789\n'), { maxChars: 50 }), EventTooLargeError)
  assert.throws(() => formatEvent({ id: 'a\nb' }), RangeError)
  assert.throws(() => formatEvent({ event: 'a\rb', data: '' }), RangeError)
})
