// Relevance on a corpus where the ranking is unambiguous: a title match outranks matches in the
// body only, and every engine puts the same posts first.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import { parseSearchQuery } from '../../src/contract/search-query.js'
import { SEARCH_TARGETS, type OpenTarget, type PostText } from './search-targets.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const filler = (n: number): string => Array.from({ length: n }, (_, i) => `filler${i % 7} words about nothing much`).join(' ')

/** Posts named by where the query words are: in the title, or only in the body (content). */
const POSTS: PostText[] = [
  { slug: 'quokka-title', title: 'Quokka sightings', summary: 'Notes from an island', content: `${filler(6)} One quokka. ${filler(6)}` },
  { slug: 'quokka-body-1', title: 'Island notes', summary: 'Field notes', content: `${filler(3)} a quokka ${filler(9)}` },
  { slug: 'quokka-body-2', title: 'Ferry timetable', summary: null, content: `${filler(8)} quokka quokka ${filler(2)}` },
  { slug: 'quokka-body-3', title: 'Camping gear', summary: 'What to pack', content: `quokka ${filler(12)} quokka quokka` },
  { slug: 'kettle-title', title: 'Solar kettle review', summary: 'A kettle in the sun', content: `${filler(5)} solar ${filler(5)} kettle` },
  { slug: 'kettle-body-1', title: 'Garden shed', summary: 'Odds and ends', content: `${filler(4)} solar kettle ${filler(4)} solar kettle` },
  { slug: 'kettle-body-2', title: 'Roof panels', summary: null, content: `solar ${filler(2)} kettle ${filler(10)} solar` },
  { slug: 'kettle-half', title: 'Solar roof', summary: 'Panels', content: `${filler(7)} kettle ${filler(3)}` },
  ...Array.from({ length: 8 }, (_, i) => ({ slug: `other-${i}`, title: `Unrelated post ${i}`, summary: 'Nothing to see', content: filler(10 + i) }))
]

/** Each query, and the posts every engine must rank first, in order. */
const EXPECTED_FIRST: Array<[string, string[]]> = [
  ['quokka', ['quokka-title']],
  ['solar kettle', ['kettle-title']],
  ['"solar kettle"', ['kettle-title']],
  // kettle-title has its word in the title and the summary.
  ['quokka OR kettle', ['kettle-title', 'quokka-title']]
]

const rankings = new Map<string, Map<string, string[]>>()

for (const target of SEARCH_TARGETS) {
  describeOrSkip(`relevance on ${target.name}`, { skip: target.skip }, () => {
    let open: OpenTarget
    before(async () => {
      open = await target.open(DEFAULT_SEARCH_SETTINGS)
      await open.replacePosts(POSTS)
    })
    after(async () => { await open?.close() })

    for (const [q, first] of EXPECTED_FIRST) {
      test(`${q}: ${first.join(', ')} first, then the body-only matches`, async () => {
        const slugs = (await open.search(parseSearchQuery(q))).map((hit) => hit.slug)
        assert.deepEqual(slugs.slice(0, first.length), first)
        const byQuery = rankings.get(q) ?? new Map<string, string[]>()
        byQuery.set(target.name, slugs)
        rankings.set(q, byQuery)
      })
    }
  })
}

test('every engine that ran found the same posts for each query', () => {
  for (const [q, byEngine] of rankings) {
    const [reference, ...others] = [...byEngine.values()].map((slugs) => [...slugs].sort())
    for (const slugs of others) assert.deepEqual(slugs, reference, q)
  }
  assert.equal(rankings.size, EXPECTED_FIRST.length)
})
