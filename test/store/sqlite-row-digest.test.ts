// SQLite's row digest: equal rows give equal digests, and rows that differ in any value (its
// kind, its length, where one ends and the next begins) give different ones.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { sqliteRowDigest } from '../../src/store/sqlite-row-digest.js'

const value = fc.oneof(fc.constant(null), fc.string({ maxLength: 6 }), fc.uint8Array({ maxLength: 4 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: -3, max: 3 }), fc.bigInt({ min: -3n, max: 3n }), fc.double({ noNaN: true, min: -2, max: 2 }))

/** What SQLite could hand over for a row, told apart as the digest must tell it. */
const described = (row: unknown[]): string => JSON.stringify(row.map((v) => Buffer.isBuffer(v) ? ['b', v.toString('hex')] : typeof v === 'bigint' ? ['v', String(v)] : typeof v === 'number' ? ['v', String(v)] : v))

test('equal rows, equal digests; different rows, different digests', () => {
  fc.assert(fc.property(fc.array(value, { maxLength: 4 }), fc.array(value, { maxLength: 4 }), (a, b) => {
    assert.equal(sqliteRowDigest(...a) === sqliteRowDigest(...b), described(a) === described(b))
  }), { numRuns: 2000 })
  assert.notEqual(sqliteRowDigest('ab', 'c'), sqliteRowDigest('a', 'bc'))
  assert.notEqual(sqliteRowDigest(null), sqliteRowDigest('n'))
  assert.match(sqliteRowDigest('x'), /^[\w-]{16}$/)
})
