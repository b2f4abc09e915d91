// Which posts match, against a reference model in JavaScript, on small generated corpora and
// queries of words, two-word phrases, OR and exclusions. Matching as each engine defines it:
// - `simple` (no stemming): a word matches a post holding it in any searched column, whatever its
//   case; a phrase matches consecutive words within one column, except on PostgreSQL, whose
//   document is the columns' words end to end, so a phrase may span the end of one column and
//   the start of the next;
// - `english` on FTS5: the same, on Porter stems (FTS5's porter tokenizer). PostgreSQL's English
//   stemmer (Snowball) and stop words make its sets differ from these, and MariaDB does not stem.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { stemmer } from 'stemmer'
import type { SearchSettings } from '../../src/search/compiled-search.js'
import { parseSearchQuery } from '../../src/contract/search-query.js'
import { SEARCH_TARGETS, type OpenTarget, type PostText, type SearchTarget } from './search-targets.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Words no engine drops: at least 4 letters (InnoDB indexes 3 and more), no stop word anywhere. */
const SIMPLE_WORDS = ['apple', 'brick', 'cloud', 'Dune', 'ember', 'fjord', 'grove', 'haven']
/** Inflections that Porter's stemmer folds together (connect, run, happy…) and some it keeps apart. */
const ENGLISH_WORDS = ['connect', 'connected', 'connection', 'connecting', 'running', 'runs', 'happy', 'happiness', 'generous', 'generously', 'quickly', 'quick']

/** Corpora and queries per engine; each corpus is searched with QUERIES_PER_CORPUS queries. */
const CORPORA = 25
const QUERIES_PER_CORPUS = 8

interface Model { groups: string[][][], excluded: string[][] }

const post = (words: readonly string[], slug: string) => fc.record({
  title: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }),
  summary: fc.option(fc.array(fc.constantFrom(...words), { maxLength: 5 })),
  content: fc.array(fc.constantFrom(...words), { maxLength: 12 })
}).map(({ title, summary, content }): PostText => ({ slug, title: title.join(' '), summary: summary?.join(' ') ?? null, content: content.join(' ') }))

const corpus = (words: readonly string[]) => fc.integer({ min: 3, max: 12 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => post(words, `post-${i}`))))

const term = (words: readonly string[]) => fc.oneof(
  fc.constantFrom(...words).map((word) => [word]),
  fc.tuple(fc.constantFrom(...words), fc.constantFrom(...words)))

const model = (words: readonly string[]): fc.Arbitrary<Model> => fc.record({
  groups: fc.array(fc.array(term(words), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  excluded: fc.array(term(words), { maxLength: 2 })
})

const write = (words: string[]): string => words.length === 1 ? (words[0] as string) : `"${words.join(' ')}"`
const queryText = ({ groups, excluded }: Model): string =>
  [...groups.map((group) => group.map(write).join(' OR ')), ...excluded.map((words) => `-${write(words)}`)].join(' ')

/** The reference: which posts of `posts` match `query`, with words compared through `key`. */
function referenceMatches (posts: readonly PostText[], query: Model, key: (word: string) => string, phrasesSpanColumns: boolean): string[] {
  return posts.filter((post) => {
    const columns = [post.title, post.summary ?? '', post.content].map((text) => text.split(' ').filter((w) => w !== '').map(key))
    const runs = phrasesSpanColumns ? [columns.flat()] : columns
    const has = (words: string[]): boolean => {
      const keys = words.map(key)
      return runs.some((run) => run.some((_, i) => keys.every((k, j) => run[i + j] === k)))
    }
    return query.groups.every((group) => group.some(has)) && !query.excluded.some(has)
  }).map((post) => post.slug).sort()
}

function describeReference (target: SearchTarget, settings: SearchSettings, words: readonly string[], key: (word: string) => string): void {
  describeOrSkip(`matches on ${target.name} (${settings.language}) equal the reference`, { skip: target.skip }, () => {
    let open: OpenTarget
    before(async () => { open = await target.open(settings) })
    after(async () => { await open?.close() })

    test(`${CORPORA} corpora, ${QUERIES_PER_CORPUS} queries each`, async () => {
      const spans = target.name === 'PostgreSQL'
      await fc.assert(fc.asyncProperty(corpus(words), fc.array(model(words), { minLength: QUERIES_PER_CORPUS, maxLength: QUERIES_PER_CORPUS }), async (posts, queries) => {
        await open.replacePosts(posts)
        for (const query of queries) {
          const found = (await open.search(parseSearchQuery(queryText(query)))).map((hit) => hit.slug).sort()
          assert.deepEqual(found, referenceMatches(posts, query, key, spans), queryText(query))
        }
      }), { numRuns: CORPORA })
    })
  })
}

const simple = { columns: ['title', 'summary', 'content'], language: 'simple' }
const english = { columns: ['title', 'summary', 'content'], language: 'english' }
const lower = (word: string): string => word.toLowerCase()

for (const target of SEARCH_TARGETS) describeReference(target, simple, SIMPLE_WORDS, lower)
for (const target of SEARCH_TARGETS.filter((t) => t.name.includes('FTS5'))) {
  describeReference(target, english, ENGLISH_WORDS, (word) => stemmer(lower(word)))
}
