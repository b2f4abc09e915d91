// The grammar of `q`: words, "phrases", -exclusions, OR (binding tighter than adjacency), its
// limits and the queries with nothing to search for, as examples and against a model.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { ProblemError } from '../../src/contract/problems.js'
import { MAX_QUERY_LENGTH, MAX_TERMS, parseSearchQuery, SEARCH_QUERY_DETAILS, type SearchQuery } from '../../src/contract/search-query.js'

/** The query as plain data: each term by its text, excluded ones prefixed with `-`. */
function shape ({ groups, excluded }: SearchQuery): string[][] {
  return [...groups.map((group) => group.map((term) => term.text)), ...excluded.map((term) => [`-${term.text}`])]
}

function refusal (q: string): string {
  try {
    parseSearchQuery(q)
  } catch (err) {
    assert.ok(err instanceof ProblemError, `not a problem: ${String(err)}`)
    assert.equal(err.kind, 'invalid-query')
    assert.equal(err.status, 400)
    return err.message
  }
  assert.fail(`${JSON.stringify(q)} was accepted`)
}

test('words, phrases, exclusions and OR, which binds tighter than adjacency', () => {
  const cases: Array<[string, string[][]]> = [
    ['rust', [['rust']]],
    ['rust async', [['rust'], ['async']]],
    ['a OR b c', [['a', 'b'], ['c']]],
    ['a b OR c', [['a'], ['b', 'c']]],
    ['a OR b OR c d OR e', [['a', 'b', 'c'], ['d', 'e']]],
    ['"quoted phrase" word', [['quoted phrase'], ['word']]],
    ['"a b" OR c', [['a b', 'c']]],
    ['rust -async', [['rust'], ['-async']]],
    ['rust -"async await"', [['rust'], ['-async await']]],
    // Lower-case or, a quoted or excluded OR are words.
    ['a or b', [['a'], ['or'], ['b']]],
    ['a "OR" b', [['a'], ['OR'], ['b']]],
    ['a -OR', [['a'], ['-OR']]],
    // An OR with no wanted term on one side is ignored; repeated ORs are one.
    ['OR a', [['a']]],
    ['a OR', [['a']]],
    ['a OR OR b', [['a', 'b']]],
    ['a OR -b', [['a'], ['-b']]],
    ['-b OR a', [['a'], ['-b']]],
    ['a OR -b OR c', [['a'], ['c'], ['-b']]],
    // Terms with no letter or digit are absent, also between ORs.
    ['a OR +++ OR b', [['a', 'b']]],
    ['a ++ b', [['a'], ['b']]],
    // Any other character belongs to the word; only a leading minus excludes.
    ['c++ node.js e-mail don\'t', [['c++'], ['node.js'], ['e-mail'], ['don\'t']]],
    ['x --a', [['x'], ['--a']]],
    ['- a', [['a']]],
    ['a -', [['a']]],
    // A quote opens a phrase anywhere; an unclosed one runs to the end.
    ['ab"cd ef"gh', [['ab'], ['cd ef'], ['gh']]],
    ['x "open phrase', [['x'], ['open phrase']]],
    ['x -"open', [['x'], ['-open']]],
    ['"" x', [['x']]],
    // Engine syntax is just characters of words.
    ['title:rust NEAR(a b) au* ^x +y ~z @2 <w> !v (p) {q}', [['title:rust'], ['NEAR(a'], ['b)'], ['au*'], ['^x'], ['+y'], ['~z'], ['@2'], ['<w>'], ['!v'], ['(p)'], ['{q}']]],
    // Any white space separates; control characters become spaces within a term.
    ['a\tb\u00a0c\u3000d', [['a'], ['b'], ['c'], ['d']]],
    ['"a\u0000b"', [['a b']]]
  ]
  for (const [q, expected] of cases) assert.deepEqual(shape(parseSearchQuery(q)), expected, q)
})

test('each term keeps its tokens, in order, and whether it was quoted', () => {
  const query = parseSearchQuery('Node.js -"Über straße" x')
  assert.deepEqual(query.groups[0]?.[0], { text: 'Node.js', tokens: ['Node', 'js'], quoted: false })
  assert.deepEqual(query.excluded[0], { text: 'Über straße', tokens: ['Über', 'straße'], quoted: true })
})

test('a query with nothing to search for is a 400, whatever makes it so', () => {
  for (const q of ['', '   ', '-rust', '-rust -"async await"', '+++ ... ---', 'OR', 'OR OR', '-a OR -b', '""', '"   "', '\u0000\u0001', '🎉 ✨']) {
    assert.equal(refusal(q), SEARCH_QUERY_DETAILS.empty, JSON.stringify(q))
  }
})

test('at most 500 characters, counted as code points', () => {
  assert.doesNotThrow(() => parseSearchQuery('a'.repeat(MAX_QUERY_LENGTH)))
  assert.equal(refusal('a'.repeat(MAX_QUERY_LENGTH + 1)), SEARCH_QUERY_DETAILS.length)
  // 500 astral letters are 1,000 UTF-16 units.
  assert.doesNotThrow(() => parseSearchQuery('𝒜'.repeat(MAX_QUERY_LENGTH)))
  assert.equal(refusal('𝒜'.repeat(MAX_QUERY_LENGTH + 1)), SEARCH_QUERY_DETAILS.length)
  assert.equal(refusal(' '.repeat(2048)), SEARCH_QUERY_DETAILS.length)
})

test('at most 32 terms, excluded ones included, ignored ones not', () => {
  const terms = (n: number): string[] => Array.from({ length: n }, (_, i) => `w${i}`)
  assert.doesNotThrow(() => parseSearchQuery(terms(MAX_TERMS).join(' ')))
  assert.equal(refusal(terms(MAX_TERMS + 1).join(' ')), SEARCH_QUERY_DETAILS.terms)
  assert.equal(refusal([...terms(MAX_TERMS), '-x'].join(' ')), SEARCH_QUERY_DETAILS.terms)
  assert.equal(refusal(`${terms(MAX_TERMS - 1).join(' ')} "a b" "c d"`), SEARCH_QUERY_DETAILS.terms)
  assert.doesNotThrow(() => parseSearchQuery([...terms(MAX_TERMS), '+', '---', 'OR'].join(' ')))
})

test('any text either parses into a well-formed query or is refused with invalid-query', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 600, unit: 'binary' }),
    fc.string({ maxLength: 120, unit: fc.constantFrom('a', 'B', ' ', '"', '-', 'OR', ' OR ', '(', ')', '*', ':', '\u0000', '\ud800', 'é', '\u0301', '\t') })
  )
  fc.assert(fc.property(text, (q) => {
    let query: SearchQuery
    try {
      query = parseSearchQuery(q)
    } catch (err) {
      assert.ok(err instanceof ProblemError && err.kind === 'invalid-query', String(err))
      return
    }
    assert.ok(query.groups.length > 0)
    const terms = [...query.groups.flat(), ...query.excluded]
    assert.ok(terms.length <= MAX_TERMS)
    for (const term of terms) {
      assert.ok(term.tokens.length > 0)
      assert.doesNotMatch(term.text, /\p{C}/u)
      if (!term.quoted) assert.equal(term.text, term.text.trim())
      assert.doesNotMatch(term.text, /"/)
    }
  }), { numRuns: 3000 })
})

/** A query written from a model: groups of alternatives and exclusions, words from a small set. */
const modelWord = fc.constantFrom('alpha', 'Beta', 'c++', 'node.js', 'über', '42', 'x-y', 'or')
const modelTerm = fc.record({ words: fc.array(modelWord, { minLength: 1, maxLength: 3 }), quoted: fc.boolean() })
  .map(({ words, quoted }) => ({ words: quoted ? words : words.slice(0, 1), quoted }))
const writeTerm = ({ words, quoted }: { words: string[], quoted: boolean }): string => quoted ? `"${words.join(' ')}"` : words.join(' ')

test('a query written from groups and exclusions parses back into them, in any interleaving', () => {
  fc.assert(fc.property(
    fc.array(fc.array(modelTerm, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
    fc.array(modelTerm, { maxLength: 3 }),
    fc.array(fc.nat(), { maxLength: 3 }),
    (groups, excluded, at) => {
      const items = groups.map((group) => group.map(writeTerm).join(' OR '))
      // Exclusions go between groups (never inside an OR chain), in their order.
      const places = excluded.map((_, i) => (at[i] ?? 0) % (groups.length + 1)).sort((a, b) => a - b)
      excluded.forEach((term, i) => items.splice((places[i] as number) + i, 0, `-${writeTerm(term)}`))
      const query = parseSearchQuery(items.join(' '))
      assert.deepEqual(query.groups.map((group) => group.map((term) => term.text)), groups.map((group) => group.map((term) => term.words.join(' '))))
      assert.deepEqual(query.excluded.map((term) => term.text), excluded.map((term) => term.words.join(' ')))
    }
  ), { numRuns: 1000 })
})
