// No `q` reaches an engine's own syntax: on every engine, fuzzed queries full of quotes,
// parentheses, the engines' operators, unicode and over-long text give results or our 400
// `invalid-query`, never an engine error.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { ProblemError } from '../../src/contract/problems.js'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import { parseSearchQuery, type SearchQuery } from '../../src/contract/search-query.js'
import { SEARCH_TARGETS, type OpenTarget, type PostText } from './search-targets.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Fuzzed queries per engine (each one run against the engine when it parses). */
const RUNS: Record<string, number> = { 'SQLite FTS5': 2000, PostgreSQL: 1000, 'MariaDB FULLTEXT': 1000, 'in-memory FTS5 index': 2000 }

/** Pieces of engine syntax (FTS5, tsquery, boolean mode, SQL), unicode and controls. */
const FRAGMENTS = [
  '"', '""', '(', ')', '*', ':', '^', 'NEAR', 'NEAR(', 'NEAR/2', 'AND', 'NOT', 'OR', 'or', '+', '-', '~', '@', '@3', '<', '>',
  '!', '!!', '&', '&&', '|', '||', '<->', '<2>', ':*', ':A', '\\', "'", "''", '%', '_', ',', '.', ';', '{', '}', '[', ']', '$1',
  '?', '--', '/*', '*/', '0x', ' ', ' ', '\t', '\n', 'title:', 'content:', 'rank', 'bm25(', 'MATCH', 'the', 'a', 'quokka',
  'Running', 'node.js', 'c++', 'x'.repeat(90), 'é', 'ß', 'İ', 'ﬁ', '日本語', 'العربية', '𝒜', '🎉', '👩‍💻', '\u0000', '\u0007',
  '\ud800', '\udfff', '\u200d', '\u200e', '\u0301', '\ufeff', '\uffff', '\u{10ffff}'
]

const query = fc.oneof(
  { weight: 5, arbitrary: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join('')) },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join(' ')) },
  { weight: 2, arbitrary: fc.string({ maxLength: 500, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 500, unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.string({ minLength: 400, maxLength: 2048, unit: fc.constantFrom(...FRAGMENTS) }) },
  { weight: 1, arbitrary: fc.string({ minLength: 1900, maxLength: 2048, unit: 'binary' }) }
)

const POSTS: PostText[] = [
  { slug: 'quokka', title: 'The quokka', summary: 'A small marsupial', content: 'Quokkas are running around Rottnest Island (node.js, c++).' },
  { slug: 'unicode', title: 'Ünïcödé 日本語', summary: 'ﬁne İstanbul straße', content: 'العربية 𝒜 🎉 👩‍💻 café "quoted" NEAR(a b) title:x' },
  { slug: 'operators', title: 'Operators', summary: null, content: '+a -b ~c <d> @3 * ^ : ! & | \\ \' % _' },
  { slug: 'long', title: 'Long', summary: '', content: 'x'.repeat(90) + ' ' + 'lorem ipsum '.repeat(200) }
]

for (const target of SEARCH_TARGETS) {
  describeOrSkip(`fuzzed q on ${target.name}`, { skip: target.skip }, () => {
    let open: OpenTarget
    before(async () => {
      open = await target.open(DEFAULT_SEARCH_SETTINGS)
      await open.replacePosts(POSTS)
    })
    after(async () => { await open?.close() })

    test('gives results or invalid-query, never an engine error', async (t) => {
      let searched = 0
      let refused = 0
      await fc.assert(fc.asyncProperty(query, async (q) => {
        let parsed: SearchQuery
        try {
          parsed = parseSearchQuery(q)
        } catch (err) {
          assert.ok(err instanceof ProblemError && err.kind === 'invalid-query', `not our 400: ${String(err)}`)
          refused++
          return
        }
        const hits = await open.search(parsed, 20)
        for (const hit of hits) {
          assert.ok(POSTS.some((post) => post.slug === hit.slug))
          assert.ok(Number.isFinite(hit.rank))
        }
        searched++
      }), { numRuns: RUNS[target.name] ?? 1000 })
      t.diagnostic(`${searched} queries searched, ${refused} refused with invalid-query`)
      // The fuzzer must reach the engine, not only the 400.
      assert.ok(searched > (RUNS[target.name] ?? 1000) / 3)
    })
  })
}
