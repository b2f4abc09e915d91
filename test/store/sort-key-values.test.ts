// The grammars of a cursor's published_at: what each store writes passes, near misses do not.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sortValueCheck } from '../../src/store/sort-key-values.js'

const timestamptz = sortValueCheck('postgres', { name: 'published_at', kind: 'value', type: 'timestamp with time zone' })
const timestamp = sortValueCheck('postgres', { name: 'published_at', kind: 'value', type: 'timestamp without time zone' })
const datetime = sortValueCheck('mysql', { name: 'published_at', kind: 'value', type: 'datetime' })

test('PostgreSQL timestamptz: the text it writes, and nothing it would refuse', () => {
  for (const text of ['2024-01-01 00:00:00+00', '2024-02-29 23:59:59.999999-05:30', '1850-01-01 00:00:00+00:09:21', '4713-11-24 00:00:00+00 BC', '294276-12-31 23:59:59.999999+00', 'infinity', '-infinity']) {
    assert.ok(timestamptz(text), text)
  }
  for (const text of ['2024-01-01 00:00 Foo/Bar', '2024-01-01 00:00:00 UTC+5000', '2024-01-01 00:00:00', '2023-02-29 00:00:00+00', '2024-13-01 00:00:00+00',
    '2024-01-01 24:00:00+00', '2024-01-01 00:00:00+16', '4713-11-23 00:00:00+00 BC', '294277-01-01 00:00:00+00', '0000-01-01 00:00:00+00', 'now', '', 'NaN']) {
    assert.ok(!timestamptz(text), text)
  }
  assert.ok(!timestamptz(1704067200000))
})

test('PostgreSQL timestamp without time zone has no zone', () => {
  assert.ok(timestamp('2024-01-01 00:00:00.5'))
  assert.ok(!timestamp('2024-01-01 00:00:00+00'))
})

test('MySQL DATETIME: its text, the zero date, and no zone', () => {
  for (const text of ['2024-01-01 00:00:00.000', '2024-01-01 00:00:00', '0000-00-00 00:00:00']) assert.ok(datetime(text), text)
  for (const text of ['2024-01-01 00:00:00+00', '2024-02-30 00:00:00', '2024-01-01T00:00:00', '2024-01-01']) assert.ok(!datetime(text), text)
})

test('integers within the column type, text of text columns and of a type we do not know', () => {
  const integer = sortValueCheck('postgres', { name: 'published_at', kind: 'value', type: 'integer' })
  assert.ok(integer('-2147483648') && integer('2147483647'))
  assert.ok(!integer('2147483648') && !integer('01') && !integer('1.0'))
  assert.ok(sortValueCheck('postgres', { name: 'published_at', kind: 'value', type: 'text' })('any text'))
  assert.ok(sortValueCheck('postgres', { name: 'published_at', kind: 'value', type: 'interval' })('1 day'))
  const sqlite = sortValueCheck('sqlite', { name: 'published_at', kind: 'value', type: 'text' })
  assert.ok(sqlite('2024-01-01 00:00 Foo/Bar') && sqlite(1.5) && !sqlite(Number.NaN))
})
