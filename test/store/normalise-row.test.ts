// Row normalisation on its own: each mapping of the "Values" table of docs/api.md that the normaliser
// does itself (the drivers do the rest, checked through real stores by store-contract.ts).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { bigintToJson, createRowNormaliser } from '../../src/store/normalise-row.js'

const generic = createRowNormaliser([])

/** The served JSON of a row: what a client sees. */
const served = (row: Record<string, unknown>, normalise = generic): unknown => JSON.parse(JSON.stringify(normalise(row)))

describe('row normalisation', () => {
  test('SQL NULL is null, whatever the driver hands over', () => {
    assert.deepEqual(served({ slug: 's', a: null, b: undefined }), { slug: 's', a: null, b: null })
  })

  test('strings pass through as stored: text, numeric/DECIMAL, dates, SQLite text timestamps', () => {
    const row = { slug: 's', title: 'Hello', score: '12.50', day: '2024-01-02', at: '2024-01-02 03:04:05' }
    assert.deepEqual(served(row), row)
  })

  test('numbers stay numbers; a non-finite one (no JSON form) is null', () => {
    assert.deepEqual(served({ slug: 's', views: 42, rating: 1.5, nan: Number.NaN, inf: Number.POSITIVE_INFINITY }),
      { slug: 's', views: 42, rating: 1.5, nan: null, inf: null })
  })

  test('integers beyond ±2^53 are exact strings; within, numbers', () => {
    const row = {
      slug: 's',
      max: BigInt(Number.MAX_SAFE_INTEGER),
      min: BigInt(Number.MIN_SAFE_INTEGER),
      above: 2n ** 53n + 1n,
      below: -(2n ** 53n) - 1n,
      huge: 2n ** 64n
    }
    assert.deepEqual(served(row), {
      slug: 's',
      max: Number.MAX_SAFE_INTEGER,
      min: Number.MIN_SAFE_INTEGER,
      above: '9007199254740993',
      below: '-9007199254740993',
      huge: '18446744073709551616'
    })
    assert.equal(bigintToJson(2n ** 53n), '9007199254740992')
    assert.equal(bigintToJson(2n ** 53n - 1n), 9007199254740991)
  })

  test('dates are ISO 8601 UTC with milliseconds; an invalid date is null', () => {
    assert.deepEqual(served({ slug: 's', at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), bad: new Date(Number.NaN) }),
      { slug: 's', at: '2024-01-02T03:04:05.678Z', bad: null })
  })

  test('booleans stay booleans; columns declared boolean turn 0 and 1 (or 0n, 1n) into false and true', () => {
    const normalise = createRowNormaliser([{ name: 'is_draft', kind: 'boolean' }, { name: 'big', kind: 'boolean' }, { name: 'odd', kind: 'boolean' }])
    assert.deepEqual(served({ slug: 's', is_draft: 1, big: 0n, odd: 2n, flag: false }, normalise), { slug: 's', is_draft: true, big: false, odd: 2, flag: false })
    assert.deepEqual(served({ slug: 's', is_draft: 0, big: 1n, odd: null }, normalise), { slug: 's', is_draft: false, big: true, odd: null })
    // Only the declared columns: elsewhere 1 is a number.
    assert.deepEqual(served({ slug: 's', views: 1 }, normalise), { slug: 's', views: 1 })
  })

  test('JSON columns are parsed; text that does not parse is served as the string', () => {
    const normalise = createRowNormaliser([{ name: 'meta', kind: 'json' }, { name: 'bad', kind: 'json' }, { name: 'parsed', kind: 'json' }, { name: 'empty', kind: 'json' }])
    assert.deepEqual(served({ slug: 's', meta: '{"a":[1,2],"b":null}', bad: 'not json', parsed: { already: true }, empty: null }, normalise),
      { slug: 's', meta: { a: [1, 2], b: null }, bad: 'not json', parsed: { already: true }, empty: null })
    assert.deepEqual(served({ slug: 's', meta: '"text"', bad: '{"a":' }, normalise), { slug: 's', meta: 'text', bad: '{"a":' })
    // Only the declared columns: elsewhere JSON-looking text stays text.
    assert.deepEqual(served({ slug: 's', note: '{"a":1}' }, normalise), { slug: 's', note: '{"a":1}' })
  })

  test('parsed JSON and PostgreSQL arrays pass through', () => {
    assert.deepEqual(served({ slug: 's', labels: ['x', 'y'], meta: { a: [1, { b: null }] } }), { slug: 's', labels: ['x', 'y'], meta: { a: [1, { b: null }] } })
  })

  test('binary columns are left out', () => {
    const row = { slug: 's', cover: Buffer.from([0xde, 0xad]), view: new Uint8Array([1]), raw: new ArrayBuffer(2), title: 'T' }
    const post = generic(row)
    assert.deepEqual(Object.keys(post), ['slug', 'title'])
    // A column declared JSON holding bytes is left out too.
    assert.deepEqual(Object.keys(createRowNormaliser([{ name: 'cover', kind: 'json' }])(row)), ['slug', 'title'])
  })

  test('a column named __proto__ is a plain property, and pollutes nothing', () => {
    const row = JSON.parse('{"slug":"s","__proto__":{"polluted":true},"constructor":"c"}') as Record<string, unknown>
    const post = generic(row)
    assert.deepEqual(Object.keys(post), ['slug', '__proto__', 'constructor'])
    assert.equal((post as Record<string, unknown>).polluted, undefined, 'not the prototype of the post')
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'not the prototype of every object')
    assert.equal(JSON.stringify(post), '{"slug":"s","__proto__":{"polluted":true},"constructor":"c"}')
  })

  test('columns keep their table order', () => {
    assert.deepEqual(Object.keys(generic({ z: 1, slug: 's', a: 2 })), ['z', 'slug', 'a'])
  })
})
