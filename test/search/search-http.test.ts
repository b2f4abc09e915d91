// `q` end to end, through both tiers over real listeners, on every store, with the store's own
// index (`migrate --search`) and without it (the post API's in-memory index): relevance order,
// paging that never repeats, counts, filters and fields with q, snippets that carry no HTML but
// <mark>, a 404 naming the search, exact freshness, the publishing rule, and fuzzed q that never
// gives a 5xx.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { nextCursorIn } from '../../src/contract/cursor.js'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import type { PostStore, PostUpsert } from '../../src/store/store.js'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'
import { describeSearch } from '../../src/posts-api/search-matches.js'
import { testConfig } from '../helpers/config.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const filler = (n: number): string => Array.from({ length: n }, (_, i) => `filler${i % 7} words about nothing much`).join(' ')

interface Fixture { slug: string, title: string, summary: string | null, content: string, tags: string[], published_at: string }

const day = (d: number): string => `2024-05-${String(d).padStart(2, '0')}T09:00:00.000Z`

/** Posts named by where the query words are: in the title, or only in the body. */
const POSTS: Fixture[] = [
  { slug: 'quokka-title', title: 'Quokka sightings', summary: 'Notes from an island', content: `${filler(6)} One quokka. ${filler(6)}`, tags: ['island'], published_at: day(1) },
  { slug: 'quokka-body-1', title: 'Island notes', summary: 'Field notes', content: `${filler(3)} a quokka ${filler(9)}`, tags: ['island'], published_at: day(2) },
  { slug: 'quokka-body-2', title: 'Ferry timetable', summary: null, content: `${filler(8)} quokka quokka ${filler(2)}`, tags: ['ferry'], published_at: day(3) },
  { slug: 'quokka-body-3', title: 'Camping gear', summary: 'What to pack', content: `quokka ${filler(12)} quokka quokka`, tags: ['gear'], published_at: day(4) },
  { slug: 'kettle-title', title: 'Solar kettle review', summary: 'A kettle in the sun', content: `${filler(5)} solar ${filler(5)} kettle`, tags: ['gear'], published_at: day(5) },
  { slug: 'kettle-body-1', title: 'Garden shed', summary: 'Odds and ends', content: `${filler(4)} solar kettle ${filler(4)} solar kettle`, tags: ['gear'], published_at: day(6) },
  { slug: 'markup', title: 'Escapes', summary: null, content: '<script>alert("quokka")</script> **bold** quokka & friends <b>tag</b> \'quoted\'', tags: [], published_at: day(7) },
  ...Array.from({ length: 6 }, (_, i) => ({ slug: `other-${i}`, title: `Unrelated post ${i}`, summary: 'Nothing to see', content: filler(10 + i), tags: [], published_at: day(10 + i) }))
]

const QUOKKAS = ['quokka-title', 'quokka-body-1', 'quokka-body-2', 'quokka-body-3', 'markup']

/** Public only from its instant on, under PUBLISHED_ONLY. */
const SCHEDULED: Fixture = { slug: 'quokka-scheduled', title: 'Quokka season', summary: null, content: filler(3), tags: [], published_at: day(25) }

const upsert = ({ published_at: publishedAt, ...post }: Fixture): PostUpsert => ({ values: { ...post, published_at: new Date(publishedAt) } })

/** Follows the next links from `path` on `base`, returning every page's slugs, in order. */
async function walk (base: string, path: string): Promise<string[]> {
  const slugs: string[] = []
  let next: string | undefined = path
  for (let pages = 0; next !== undefined; pages++) {
    assert.ok(pages < 100, 'the walk ends')
    const response = await get(base, next)
    assert.equal(response.status, 200, response.text)
    slugs.push(...(JSON.parse(response.text) as Array<{ slug: string }>).map((post) => post.slug))
    const link = response.headers.link
    next = typeof link === 'string' ? /<([^>]+)>/.exec(link)?.[1] : undefined
    if (next !== undefined) assert.ok(nextCursorIn(link as string), 'a next link carries a valid cursor')
  }
  return slugs
}

const SERVERS: Array<[string, TestServer]> = [['SQLite', sqliteServer], ['PostgreSQL', postgresServer], ['MariaDB/MySQL', mysqlServer]]

for (const [name, server] of SERVERS) {
  for (const indexed of [true, false]) {
    describeOrSkip(`q on ${name}, ${indexed ? 'with migrate --search' : 'without an index in the store (in-memory index)'}`, { skip: server.skip }, () => {
      let database: TestDatabase
      let writer: PostStore
      let tiers: Tiers
      let serving: PostStore
      // The post API's clock (PUBLISHED_ONLY): before the scheduled post's instant, until a test moves it.
      let clock = Date.parse(day(22))
      const now = (): number => clock

      before(async () => {
        database = await server.create()
        writer = await openTestStore(database.location, { writable: true })
        await writer.migrate(indexed ? { search: DEFAULT_SEARCH_SETTINGS } : {})
        await writer.checkSchema()
        await writer.upsertPosts([...POSTS, SCHEDULED].map(upsert), { dryRun: false })
        serving = await openTestStore(database.location, { publishing: { publishedOnly: true, now } })
        await serving.checkSchema()
        tiers = await startTiers(serving, { now })
      })
      after(async () => {
        await tiers?.close()
        await writer?.close()
        await database?.drop()
      })

      test(indexed ? 'the store\'s index is found, and the start-up log names it' : 'the store has no index: the post API keeps its own, and the start-up log says so', async () => {
        const found = await serving.openSearchIndex?.(DEFAULT_SEARCH_SETTINGS)
        assert.equal(found !== undefined, indexed)
        const line = await describeSearch(serving, testConfig().search)
        assert.match(line, indexed ? /^search \(q\) runs on the (SQLite FTS5 table|PostgreSQL column|FULLTEXT index)/ : /^search \(q\) runs on an in-memory index of title, summary, content/)
      })

      test('a title match ranks first, then the body-only matches; every tier answers the same', async () => {
        for (const [base, route] of [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts']] as const) {
          const response = await get(base, `${route}?q=quokka`)
          assert.equal(response.status, 200, response.text)
          const slugs = (JSON.parse(response.text) as Array<{ slug: string }>).map((post) => post.slug)
          assert.equal(slugs[0], 'quokka-title')
          assert.deepEqual([...slugs].sort(), [...QUOKKAS].sort())
        }
        // What the index adds to the table (PostgreSQL's stored document) is never served.
        const list = (await get(tiers.front.url, '/api/blog')).json() as Array<Record<string, unknown>>
        assert.deepEqual(Object.keys(list[0] ?? {}).sort(), ['content', 'id', 'published_at', 'slug', 'summary', 'tags', 'title', 'updated_at', 'author'].sort())
      })

      test('pages of one search, walked on either tier, hold every match once, in the order of the whole list', async () => {
        const whole = (JSON.parse((await get(tiers.posts.url, '/api/posts?q=quokka%20OR%20kettle')).text) as Array<{ slug: string }>).map((post) => post.slug)
        for (const limit of [1, 2, 3]) {
          assert.deepEqual(await walk(tiers.front.url, `/api/blog?q=quokka%20OR%20kettle&limit=${limit}`), whole)
          assert.deepEqual(await walk(tiers.posts.url, `/api/posts?q=quokka%20OR%20kettle&limit=${limit}`), whole)
        }
      })

      test('count=exact, tags, dates and fields combine with q', async () => {
        const counted = await get(tiers.front.url, '/api/blog?q=quokka&count=exact&limit=2')
        assert.equal(counted.headers['x-total-count'], String(QUOKKAS.length))
        const tagged = await get(tiers.front.url, '/api/blog?q=quokka&tag=island&count=exact&fields=title')
        assert.equal(tagged.headers['x-total-count'], '2')
        assert.deepEqual(JSON.parse(tagged.text), [{ slug: 'quokka-title', title: 'Quokka sightings' }, { slug: 'quokka-body-1', title: 'Island notes' }])
        const dated = await get(tiers.front.url, '/api/blog?q=quokka&published_after=2024-05-02T12:00:00Z&fields=slug')
        assert.deepEqual((JSON.parse(dated.text) as Array<{ slug: string }>).map((post) => post.slug).sort(), ['markup', 'quokka-body-2', 'quokka-body-3'])
      })

      test('highlight=true adds a snippet of escaped plain text whose only markup is <mark>', async () => {
        const response = await get(tiers.front.url, '/api/blog?q=quokka&highlight=true&fields=title')
        const posts = JSON.parse(response.text) as Array<{ slug: string, title: string, search_snippet: string }>
        assert.equal(posts.length, QUOKKAS.length)
        for (const post of posts) {
          assert.deepEqual(Object.keys(post).sort(), ['search_snippet', 'slug', 'title'])
          assert.match(post.search_snippet, /<mark>quokka<\/mark>/i)
          assert.equal(post.search_snippet.replace(/<\/?mark>/g, '').match(/[<>]/), null, post.search_snippet)
        }
        const markup = posts.find((post) => post.slug === 'markup')
        assert.match(markup?.search_snippet ?? '', /&lt;b&gt;|&amp;/)
        // A match in the title only: the snippet is the title's.
        const titled = (await get(tiers.front.url, '/api/blog?q=sightings&highlight=true&fields=slug')).json() as Array<{ search_snippet: string }>
        assert.deepEqual(titled.map((post) => post.search_snippet), ['Quokka <mark>sightings</mark>'])
      })

      test('no match is a 404 naming the search; a q too long or with too many terms is a 400 before any upstream call', async () => {
        const none = await get(tiers.front.url, '/api/blog?q=wombat')
        assert.equal(assertProblem(none, 'no-posts').detail, 'No post matches q=wombat.')
        assertProblem(await get(tiers.front.url, `/api/blog?q=${'a'.repeat(501)}`), 'invalid-query')
        assertProblem(await get(tiers.front.url, `/api/blog?q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join('+')}`), 'invalid-query')
        assertProblem(await get(tiers.front.url, '/api/blog?highlight=true'), 'invalid-query')
        // The keyed list holds a shape in list order, never a search's.
        assertProblem(await get(tiers.posts.url, '/api/posts/keyed?q=quokka'), 'invalid-query')
      })

      test('a committed change shows in the very next search', async () => {
        const path = '/api/blog?q=numbat&fields=slug'
        assert.equal((await get(tiers.front.url, path)).status, 404)
        await writer.upsertPosts([upsert({ slug: 'numbat', title: 'Numbat spotted', summary: null, content: filler(2), tags: [], published_at: day(20) })], { dryRun: false })
        assert.deepEqual(JSON.parse((await get(tiers.front.url, path)).text), [{ slug: 'numbat' }])
        await database.exec("DELETE FROM posts WHERE slug = 'numbat'")
        assert.equal((await get(tiers.front.url, path)).status, 404)
      })

      test('PUBLISHED_ONLY: a scheduled post is found only once its instant has passed, in the very next search', async () => {
        const slugs = async (base: string, path: string): Promise<string[]> => ((await get(base, path)).json() as Array<{ slug: string }>).map((post) => post.slug)
        assert.ok(!(await slugs(tiers.front.url, '/api/blog?q=quokka')).includes(SCHEDULED.slug))
        assert.equal((await get(tiers.front.url, '/api/blog?q=quokka&count=exact&limit=1')).headers['x-total-count'], String(QUOKKAS.length))
        clock = Date.parse(day(26))
        assert.ok((await slugs(tiers.front.url, '/api/blog?q=quokka')).includes(SCHEDULED.slug))
        assert.equal((await get(tiers.posts.url, '/api/posts?q=quokka&count=exact&limit=1')).headers['x-total-count'], String(QUOKKAS.length + 1))
      })

      test('SEARCH_LANGUAGE: english finds a word by its stem, simple only as written (an index made for english is not used then)', async () => {
        const store = await openTestStore(database.location, { publishing: { publishedOnly: true, now } })
        await store.checkSchema()
        const simple = await startTiers(store, { settings: { SEARCH_LANGUAGE: 'simple' }, now })
        try {
          // MariaDB never stems: its FULLTEXT index matches words as written, whatever the setting.
          const stems = !(indexed && name === 'MariaDB/MySQL')
          assert.equal((await get(tiers.front.url, '/api/blog?q=quokkas')).status, stems ? 200 : 404)
          assert.equal((await get(simple.front.url, '/api/blog?q=quokkas')).status, 404)
          assert.equal((await get(simple.front.url, '/api/blog?q=quokka')).status, 200)
        } finally {
          await simple.close()
        }
      })

      test('fuzzed q (quotes, parentheses, engine operators, unicode, 2 KB) never gives a 5xx', async () => {
        const pieces = fc.constantFrom('"', '(', ')', '-', '+', '*', '~', '@', '<', '>', ':', '^', 'OR', 'AND', 'NOT', 'NEAR', '\'', '\\', '%', '_', ' ', 'quokka', 'é', '日本', '🦘', '\u0000', '\u200b', 'title:', '{', '}')
        const q = fc.oneof(fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join('')), fc.string({ unit: 'binary', maxLength: 60 }), fc.constant('quokka '.repeat(300)))
        await fc.assert(fc.asyncProperty(q, async (text) => {
          for (const [base, route] of [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts']] as const) {
            const response = await get(base, `${route}?q=${encodeURIComponent(text)}&highlight=true&limit=3`)
            assert.ok([200, 400, 404].includes(response.status), `${response.status} for ${JSON.stringify(text)}: ${response.text}`)
          }
        }), { numRuns: 60 })
      })
    })
  }
}
