import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { closestNames, editDistance } from '../../src/lib/closest-names.js'

/** The reference: the same distance by plain recursion (short words only). */
function referenceDistance (a: string, b: string): number {
  if (a === '') return b.length
  if (b === '') return a.length
  const cost = a[0] === b[0] ? 0 : 1
  let best = Math.min(referenceDistance(a.slice(1), b) + 1, referenceDistance(a, b.slice(1)) + 1, referenceDistance(a.slice(1), b.slice(1)) + cost)
  if (a.length > 1 && b.length > 1 && a[0] === b[1] && a[1] === b[0]) best = Math.min(best, referenceDistance(a.slice(2), b.slice(2)) + 1)
  return best
}

const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '-'), maxLength: 6 })

test('editDistance agrees with the reference, and is symmetric', () => {
  fc.assert(fc.property(word, word, (a, b) => {
    assert.equal(editDistance(a, b), referenceDistance(a, b))
    assert.equal(editDistance(a, b), editDistance(b, a))
  }))
  assert.equal(editDistance('blog-prot', 'blog-port'), 1, 'two neighbours swapped are one edit')
})

const FLAGS = ['database-url', 'api-url', 'host', 'blog-port', 'posts-port', 'admin-port', 'log-level', 'workers', 'dry-run', 'help', 'version']

/** `name` with one edit at `at`: a letter inserted, removed, replaced, or swapped with the next. */
const oneEdit = fc.record({
  name: fc.constantFrom(...FLAGS),
  kind: fc.constantFrom('insert', 'remove', 'replace', 'swap'),
  at: fc.nat(),
  letter: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz-')
}).map(({ name, kind, at, letter }) => {
  const i = at % name.length
  const typo = kind === 'insert'
    ? name.slice(0, i) + letter + name.slice(i)
    : kind === 'remove'
      ? name.slice(0, i) + name.slice(i + 1)
      : kind === 'replace'
        ? name.slice(0, i) + letter + name.slice(i + 1)
        : name.slice(0, i) + (name[i + 1] ?? '') + name[i] + name.slice(i + 2)
  return { name, typo }
})

test('a name with one typo suggests the name meant', () => {
  fc.assert(fc.property(oneEdit, ({ name, typo }) => {
    fc.pre(!FLAGS.includes(typo))
    assert.ok(closestNames(typo, FLAGS).includes(name), `${typo} → ${closestNames(typo, FLAGS).join(', ')}`)
  }))
})

test('a part of several names suggests them all; a word like none suggests nothing', () => {
  assert.deepEqual(closestNames('port', FLAGS), ['blog-port', 'posts-port', 'admin-port'])
  assert.deepEqual(closestNames('database', FLAGS), ['database-url'])
  assert.deepEqual(closestNames('DRYRUN', FLAGS), ['dry-run'])
  assert.deepEqual(closestNames('colour', FLAGS), [])
  assert.deepEqual(closestNames('', FLAGS), [])
})
