// PostgreSQL's timestamps as served, against the reference: node-postgres's own parser, then
// Date#toISOString (what every timestamp went through before the text was rewritten directly).
// No server needed: the inputs are the text forms the server writes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import pg from 'pg'
import { isoTimestamp, isoTimestamptz } from '../../src/store/postgres-timestamps.js'

const parse = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number
const reference = (text: string, parsed: Date | number): string => parsed instanceof Date && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : text

const pad = (n: number, width: number): string => String(n).padStart(width, '0')
/** The server's text of a timestamp: any year it writes in four digits, a fraction of 0 to 6 digits (no trailing zeros, as it writes them). */
const wallClock = fc.record({
  year: fc.integer({ min: 1, max: 9999 }),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 }),
  micros: fc.integer({ min: 0, max: 999_999 })
}).map(({ year, month, day, hour, minute, second, micros }) => {
  const fraction = micros === 0 ? '' : `.${pad(micros, 6).replace(/0+$/, '')}`
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)} ${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction}`
})
const offset = fc.constantFrom('+00', '+02', '-05', '+05:30', '+00 BC')

test('a timestamptz is served as node-postgres and toISOString would serve it, whatever its offset', () => {
  fc.assert(fc.property(wallClock, offset, (clock, zone) => {
    const text = `${clock}${zone}`
    assert.equal(isoTimestamptz(text), reference(text, parse(text)), text)
  }), { numRuns: 5000 })
})

test('a timestamp without time zone is served as that instant in UTC', () => {
  fc.assert(fc.property(wallClock, (text) => {
    assert.equal(isoTimestamp(text), reference(text, parse(`${text}Z`)), text)
  }), { numRuns: 5000 })
})

test('values without an instant are served as the server wrote them', () => {
  for (const text of ['infinity', '-infinity']) {
    assert.equal(isoTimestamptz(text), text)
    assert.equal(isoTimestamp(text), text)
  }
})
