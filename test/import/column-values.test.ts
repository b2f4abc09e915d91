// Each imported value as its column needs it, or refused with the column, its type and the value:
// the conversion both the dry run and the real run apply before writing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import type { ColumnShape } from '../../src/store/column-shapes.js'
import { ColumnValueError, columnParameter, type ValueTarget } from '../../src/store/column-values.js'

const postgres: ValueTarget = { dialect: 'postgres', timestampParameter: (date) => date }
const mysql: ValueTarget = { dialect: 'mysql', timestampParameter: (date) => date }
const sqlite: ValueTarget = { dialect: 'sqlite', timestampParameter: (date) => date.toISOString() }

const column = (shape: Partial<ColumnShape> & Pick<ColumnShape, 'family' | 'type'>): ColumnShape =>
  ({ name: 'c', notNull: false, optional: true, ...shape })

const refuses = (target: ValueTarget, shape: ColumnShape, value: Parameters<typeof columnParameter>[2], reason: RegExp): void => {
  assert.throws(() => columnParameter(target, shape, value), (err: unknown) => err instanceof ColumnValueError && reason.test(err.message))
}

test('tags: a PostgreSQL array gets an array, JSON columns JSON, text columns JSON text', () => {
  const tags = ['a', 'with, comma', 'quote "x"', '{braces}']
  assert.deepEqual(columnParameter(postgres, column({ family: 'array', element: 'text', type: 'text[]' }), tags), tags)
  assert.deepEqual(columnParameter(postgres, column({ family: 'array', element: 'text', type: 'text[]' }), [2024, true]), ['2024', 'true'])
  assert.equal(columnParameter(postgres, column({ family: 'json', type: 'jsonb' }), tags), JSON.stringify(tags))
  assert.equal(columnParameter(mysql, column({ family: 'text', type: 'text' }), tags), JSON.stringify(tags))
  assert.equal(columnParameter(sqlite, column({ family: 'other', type: 'text' }), tags), JSON.stringify(tags))
  refuses(postgres, column({ family: 'array', element: 'text', type: 'text[]' }), 'a', /^column `c` \(text\[\]\) cannot hold "a": expected a list$/)
  refuses(postgres, column({ family: 'array', element: 'integer', type: 'integer[]' }), ['x'], /expected a list of numbers/)
  refuses(postgres, column({ family: 'array', element: 'text', type: 'text[]' }), [['nested']], /expected a list of words or numbers/)
})

test('a word into a JSON column is a JSON string; dates are ISO 8601 there', () => {
  assert.equal(columnParameter(mysql, column({ family: 'json', type: 'longtext' }), 'news'), '"news"')
  assert.equal(columnParameter(mysql, column({ family: 'json', type: 'json' }), new Date('2024-01-02T00:00:00Z')), '"2024-01-02T00:00:00.000Z"')
})

test('text: scalars as text, labels of an enum, a length limit in characters or bytes', () => {
  const varchar = column({ family: 'text', type: 'character varying(5)', maxLength: 5 })
  assert.equal(columnParameter(postgres, varchar, 'éééé\u{1F600}'), 'éééé\u{1F600}')
  assert.equal(columnParameter(postgres, varchar, 12), '12')
  refuses(postgres, varchar, 'abcdef', /^column `c` \(character varying\(5\)\) cannot hold "abcdef": 6 characters, more than its 5$/)
  refuses(mysql, column({ family: 'text', type: 'tinytext', maxLength: 255, lengthInBytes: true }), 'é'.repeat(128), /256 bytes, more than its 255/)
  const status = column({ family: 'text', type: "enum('draft','published')", labels: ['draft', 'published'], labelsIgnoreCase: true })
  assert.equal(columnParameter(mysql, status, 'Draft'), 'Draft')
  refuses(mysql, status, 'scheduled', /expected one of "draft", "published"/)
  refuses(postgres, column({ family: 'text', type: 'post_status', labels: ['draft', 'published'] }), 'Draft', /expected one of/)
})

test('numbers, booleans and timestamps', () => {
  const integer = column({ family: 'integer', type: 'integer', range: [-(2n ** 31n), 2n ** 31n - 1n] })
  assert.equal(columnParameter(postgres, integer, 3), 3)
  assert.equal(columnParameter(postgres, integer, ' 42 '), '42')
  refuses(postgres, integer, 'ten', /^column `c` \(integer\) cannot hold "ten": expected a whole number$/)
  refuses(postgres, integer, 1.5, /expected a whole number/)
  refuses(postgres, integer, 2 ** 31, /out of the column's range/)
  refuses(postgres, integer, true, /expected a whole number/)
  assert.equal(columnParameter(mysql, column({ family: 'integer', type: 'tinyint(1)', range: [-128n, 127n] }), true), 1)
  assert.equal(columnParameter(postgres, column({ family: 'number', type: 'numeric' }), '12.50'), '12.50')
  refuses(postgres, column({ family: 'number', type: 'numeric' }), 'NaN', /expected a number/)
  assert.equal(columnParameter(postgres, column({ family: 'boolean', type: 'boolean' }), false), false)
  refuses(postgres, column({ family: 'boolean', type: 'boolean' }), 'yes', /expected true or false/)
  const timestamp = column({ family: 'timestamp', type: 'timestamp with time zone' })
  assert.deepEqual(columnParameter(postgres, timestamp, '2024-01-02 10:00:00'), new Date('2024-01-02T10:00:00Z'))
  assert.deepEqual(columnParameter(postgres, timestamp, '2024-01-02'), new Date('2024-01-02T00:00:00Z'))
  assert.deepEqual(columnParameter(postgres, timestamp, '2024-01-02T10:00:00+02:00'), new Date('2024-01-02T08:00:00Z'))
  refuses(postgres, timestamp, 'soon', /expected a date/)
  refuses(postgres, timestamp, '2024-01-02x', /expected a date/)
})

test('NULL into a NOT NULL column is refused; elsewhere it is NULL', () => {
  refuses(postgres, column({ family: 'text', type: 'text', notNull: true }), null, /^column `c` \(text\) cannot hold null: the column is NOT NULL$/)
  assert.equal(columnParameter(postgres, column({ family: 'text', type: 'text' }), null), null)
  assert.equal(columnParameter(sqlite, undefined, true), 1, 'a column not described takes the value as it is')
})

test('varchar(n) holds a text exactly when it has at most n characters (code points), and holds it unchanged', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.integer({ min: 1, max: 10 }), (text, n) => {
    const shape = column({ family: 'text', type: `character varying(${n})`, maxLength: n })
    const fits = Array.from(text).length <= n
    try {
      assert.equal(columnParameter(postgres, shape, text), text)
      return fits
    } catch (err) {
      return !fits && err instanceof ColumnValueError
    }
  }))
})

test('an integer column holds a whole number exactly when it is within its range', () => {
  const range = [-128n, 127n] as const
  fc.assert(fc.property(fc.integer({ min: -1000, max: 1000 }), (n) => {
    const shape = column({ family: 'integer', type: 'tinyint', range })
    const fits = BigInt(n) >= range[0] && BigInt(n) <= range[1]
    try {
      return columnParameter(mysql, shape, n) === n && fits
    } catch (err) {
      return !fits && err instanceof ColumnValueError
    }
  }))
})
