// Row versions: the same for the same row in every process, whatever the order of its keys, and
// different whenever anything a client would receive differs.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { canonicalForm, rowVersion } from '../../src/sync/row-version.js'

/** `value` with the keys of every object in another order. */
function reordered (value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, i) => reordered(item, seed + i))
  if (typeof value !== 'object' || value === null) return value
  const entries = Object.entries(value)
  const rotated = entries.slice(seed % Math.max(entries.length, 1)).concat(entries.slice(0, seed % Math.max(entries.length, 1))).reverse()
  return Object.fromEntries(rotated.map(([key, item]) => [key, reordered(item, seed + 1)]))
}

// Strings that look like pieces of the canonical form, so that a form that is not prefix-free
// (one value passing for another) shows up.
const trickyString = fc.constantFrom('', 'a', 'b', 's', 'as', 'sa', 's1:a', 'o1:', 'a1:', '1;', 'null;', ':', '\ud800', '\udfff', '\ufffd', 'é', 'e\u0301')
const trickyJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString, fc.constantFrom(0, 1, -1, 1.5, 1e21, null, true, false),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 3 })
  )
})).value

/** What a client receives: the value after a JSON round trip. */
const received = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

test('a version does not depend on the order of keys, at any depth, nor on a JSON round trip', () => {
  fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.nat(), (row, seed) => {
    const version = rowVersion(row)
    assert.equal(rowVersion(reordered(row, seed) as Record<string, unknown>), version)
    assert.equal(rowVersion(received(row) as Record<string, unknown>), version)
  }), { numRuns: 1000 })
})

/**
 * A reader of the canonical form, written from its description: that every form reads back as
 * exactly the value written proves that no two values share a form.
 */
function readCanonical (text: string): unknown {
  let at = 0
  const upTo = (end: string): string => {
    const stop = text.indexOf(end, at)
    assert.ok(stop >= at, `"${end}" expected after ${at} in ${text}`)
    const piece = text.slice(at, stop)
    at = stop + 1
    return piece
  }
  const value = (): unknown => {
    const tag = text[at]
    if (tag === 's') {
      at++
      const length = Number(upTo(':'))
      const string = text.slice(at, at + length)
      at += length
      return string
    }
    if (tag === 'j') {
      // A JSON string literal: up to the first quote no backslash escapes.
      const start = ++at
      at++
      while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1
      return JSON.parse(text.slice(start, ++at)) as string
    }
    if (tag === 'a') {
      at++
      return Array.from({ length: Number(upTo(':')) }, value)
    }
    if (tag === 'o') {
      at++
      const count = Number(upTo(':'))
      const object: Record<string, unknown> = {}
      for (let i = 0; i < count; i++) {
        // As JSON.parse does, `__proto__` included: an own property.
        Object.defineProperty(object, value() as string, { value: value(), enumerable: true, writable: true, configurable: true })
      }
      return object
    }
    return JSON.parse(upTo(';'))
  }
  const result = value()
  assert.equal(at, text.length, 'the whole form is read')
  return result
}

test('the canonical form reads back as exactly the JSON a client would receive', () => {
  fc.assert(fc.property(fc.oneof(trickyJson, fc.jsonValue()), (value) => {
    assert.deepEqual(readCanonical(canonicalForm(value)), received(value))
  }), { numRuns: 5000 })
})

test('two values have the same canonical form only when a client would receive the same JSON', () => {
  // A domain so small that different values often meet.
  const tiny = fc.array(fc.oneof(fc.constantFrom('', 'a', 's', 'as', 'sa', 1), fc.array(fc.constantFrom('', 's', 'a'), { maxLength: 2 })), { maxLength: 3 })
  fc.assert(fc.property(tiny, tiny, (a, b) => {
    assert.equal(canonicalForm(a) === canonicalForm(b), isDeepStrictEqual(received(a), received(b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
  }), { numRuns: 5000 })
})

test('versions are short, URL-safe, and the same in every process and Node line (a fixed vector)', () => {
  const row = { slug: 'hello-world', title: 'Héllo, "world"', tags: ['a', 'b'], meta: { z: 1.5, a: [null, true] }, published_at: '2024-01-01T00:00:00.000Z', views: 12 }
  assert.equal(rowVersion(row), '3cHXNOOrLW756ygJ')
  assert.match(rowVersion({ slug: 'x' }), /^[\w-]{16}$/)
  assert.equal(canonicalForm({ b: [1, 'x'], a: null, skipped: undefined, at: new Date(0) }), 'o3:s1:anull;s2:ats24:1970-01-01T00:00:00.000Zs1:ba2:1;s1:x')
  assert.notEqual(rowVersion({ slug: 'x', title: '\ud800' }), rowVersion({ slug: 'x', title: '\udbff' }))
})
