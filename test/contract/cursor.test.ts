// The cursor of a list's `after`: strict (only what encodeCursor makes decodes), and read from
// the next link of a Link header.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { decodeCursor, encodeCursor, MAX_CURSOR_LENGTH, nextCursorIn, type SortKey } from '../../src/contract/cursor.js'
import { SORT_COLUMNS, type ListSort } from '../../src/contract/list-sort.js'

const lookupableSlug = fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s)) // eslint-disable-line no-control-regex
const cursorValue = fc.oneof(fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'grapheme', maxLength: 60 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s))) // eslint-disable-line no-control-regex
/** Every sort but the default, whose cursors keep their original form. */
const OTHER_SORTS = SORT_COLUMNS.flatMap((column): ListSort[] => [column, `-${column}`]).filter((sort) => sort !== '-published_at')
const sortKey: fc.Arbitrary<SortKey> = fc.oneof(
  fc.record({ slug: lookupableSlug }),
  fc.record({ slug: lookupableSlug, publishedAt: cursorValue }),
  fc.record({ slug: lookupableSlug, sort: fc.constantFrom('slug', '-slug') as fc.Arbitrary<ListSort> }),
  fc.record({ slug: lookupableSlug, sort: fc.constantFrom(...OTHER_SORTS.filter((sort) => !sort.endsWith('slug'))), value: cursorValue }),
  fc.record({ slug: lookupableSlug, rank: fc.double({ noNaN: true, noDefaultInfinity: true }).map((rank) => rank === 0 ? 0 : rank) })
)

test('every sort key survives its cursor, which is base64url only', () => {
  fc.assert(fc.property(sortKey, (key) => {
    const cursor = encodeCursor(key)
    assert.match(cursor, /^[A-Za-z0-9_-]+$/)
    const decoded = decodeCursor(cursor)
    // -0 is written 0: the same position.
    assert.deepEqual(decoded, Object.is(key.publishedAt, -0) ? { ...key, publishedAt: 0 } : Object.is(key.value, -0) ? { ...key, value: 0 } : { ...key })
  }), { numRuns: 2000 })
})

test('a decoded key encodes as its text; a key made from it with another member, as that key', () => {
  fc.assert(fc.property(sortKey, lookupableSlug, (key, slug) => {
    const cursor = encodeCursor(key)
    const decoded = decodeCursor(cursor)
    assert.ok(decoded !== undefined)
    assert.equal(encodeCursor(decoded), cursor)
    // What a fresh key of the same members makes: the text a decoded key remembers is never carried over.
    const moved = { ...decoded, slug }
    assert.equal(encodeCursor(moved), encodeCursor(JSON.parse(JSON.stringify(moved)) as SortKey))
    assert.deepEqual(Object.getOwnPropertySymbols(moved), [])
  }), { numRuns: 2000 })
})

test('a cursor with any one character changed, dropped or added either is refused or is exactly another key\'s cursor', () => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ .%'
  fc.assert(fc.property(sortKey, fc.nat(), fc.nat(alphabet.length - 1), fc.constantFrom('change', 'drop', 'add'), (key, at, char, edit) => {
    const cursor = encodeCursor(key)
    const i = at % cursor.length
    const c = alphabet[char] ?? 'A'
    const edited = edit === 'change' ? cursor.slice(0, i) + c + cursor.slice(i + 1) : edit === 'drop' ? cursor.slice(0, i) + cursor.slice(i + 1) : cursor.slice(0, i) + c + cursor.slice(i)
    const decoded = decodeCursor(edited)
    if (decoded !== undefined) assert.equal(encodeCursor(decoded), edited)
  }), { numRuns: 5000 })
})

test('cursors that are not exactly what encodeCursor makes are refused', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64url')
  const refused = [
    '', '!!!!', `${encodeCursor({ slug: 'a' })}=`, Buffer.from('["a"]').toString('base64'), b64('[ "a"]'), b64('["a"] '), b64('{"slug":"a"}'),
    b64('"a"'), b64('[]'), b64('["a","b","c"]'), b64('[1]'), b64('[null]'), b64('[true,"a"]'), b64('[{},"a"]'), b64('[[],"a"]'),
    b64('[1e400,"a"]'), b64('[1.0,"a"]'), b64('[1E2,"a"]'), b64('["\\u0061"]'), b64('[""]'), b64(`["${'a'.repeat(201)}"]`), b64('["a\\u0000"]'),
    b64('["\\ud800"]'), b64('["x\\u0007","a"]'), Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]).toString('base64url'),
    'A'.repeat(MAX_CURSOR_LENGTH + 4), `${encodeCursor({ slug: 'ab' }).slice(0, -1)}x`
  ]
  const sorted = [
    b64('{"title":["a"]}'), b64('{"title":["x","a","b"]}'), b64('{"slug":["x","a"]}'), b64('{"slug":[null,"a"]}'), b64('{"-published_at":["x","a"]}'),
    b64('{"Title":["x","a"]}'), b64('{"title":["x","a"],"slug":["a"]}'), b64('{}'), b64('{"title":"a"}'), b64('{"title":[true,"a"]}'), b64('{"title":["x",""]}'),
    b64('{ "title":["x","a"]}'), b64('{"__proto__":["x","a"]}'), b64('{"--title":["x","a"]}'), b64('{"title":["x\u0000","a"]}')
  ]
  for (const cursor of [...refused, ...sorted]) assert.equal(decodeCursor(cursor), undefined, cursor)
  assert.deepEqual(decodeCursor(b64('{"-title":["Été","a"]}')), { slug: 'a', sort: '-title', value: 'Été' })
  assert.deepEqual(decodeCursor(b64('{"slug":["a"]}')), { slug: 'a', sort: 'slug' })
  assert.deepEqual(decodeCursor(b64('[1e+21,"a"]')), { slug: 'a', publishedAt: 1e21 })
  assert.deepEqual(decodeCursor(b64('["é"]')), { slug: 'é' })
})

test('the cursor of a next link in a Link header: none, a valid one, or null for one that is not valid', () => {
  const cursor = encodeCursor({ slug: 'a', publishedAt: '2024-01-01 00:00:00+00' })
  assert.equal(nextCursorIn('</api/posts?after=x>; rel="prev"'), undefined)
  assert.equal(nextCursorIn(''), undefined)
  for (const header of [
    `</api/posts?limit=2&after=${cursor}>; rel="next"`, `</a?after=${cursor}>;rel=next`, `</p>; rel="prev", </n?after=${cursor}&x=1>; rel="last next"`,
    `<https://other.example/x?after=${cursor}>; title="a, b"; rel="NEXT"`
  ]) {
    assert.deepEqual(nextCursorIn(header), { slug: 'a', publishedAt: '2024-01-01 00:00:00+00' }, header)
  }
  for (const header of ['</api/posts?limit=2>; rel="next"', '</api/posts?after=zz>; rel="next"', `</api/posts#after=${cursor}>; rel="next"`]) {
    assert.equal(nextCursorIn(header), null, header)
  }
})
