// The list queries against a reference model: random rows, random combinations of the filters
// (tag sets with free-form tags, date windows, a search `q` of the titles' words) with random
// pages; the answer's membership and order (a search's order is its relevance: there, the
// membership, and every walk in the whole list's order), its count, a cursor walk through both
// tiers, and the tag counts equal what the model computes in JavaScript.
// SQLite always; PostgreSQL (a jsonb and a text[] `tags`) and MySQL when their test servers are
// set (mandatory in CI), as the store suites run; searched with the store's index
// (`migrate --search`) on some, the post API's in-memory index on the others.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiersOn, type Tiers } from '../helpers/tiers.js'

const RUNS = Number(process.env.MODEL_RUNS ?? 60)

/** Free-form tags, some differing only by case (matched exactly). */
const TAGS = ['C++', 'Node.js', 'PostgreSQL', 'sql', 'SQL', 'x y', 'été'] as const
/** Instants of the rows, a millisecond apart in places (every store keeps milliseconds). */
const INSTANTS = [
  '2023-12-31T23:59:59.999Z', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2024-03-01T12:30:00.000Z', '2024-05-01T00:00:00.000Z', '2025-06-15T08:00:00.500Z'
] as const
/** Bounds as a client writes them, each with the instant it means. */
const BOUNDS: ReadonlyArray<readonly [string, string]> = [
  ...INSTANTS.map((iso) => [iso, iso] as const),
  ['2024-01-01', '2024-01-01T00:00:00.000Z'], ['2024-05-01', '2024-05-01T00:00:00.000Z'], ['2024-03-01T14:30:00%2B02:00', '2024-03-01T12:30:00.000Z'],
  ['2023-12-31T19:00:00.0005-05:00', '2024-01-01T00:00:00.0005Z']
]

/** Title words: at least 4 letters and no stop word (InnoDB indexes 3 and more), the same stem under every engine. */
const WORDS = ['apple', 'brick', 'cloud', 'ember', 'fjord', 'grove'] as const

interface Row { slug: string, words: readonly string[], tags: readonly string[] | null, publishedAt: string | null, updatedAt: string | null }

/** A search, and which titles it matches. */
interface Search { text: string, matches: (words: readonly string[]) => boolean }

const word = fc.constantFrom(...WORDS)
const search: fc.Arbitrary<Search> = fc.oneof(
  word.map((w) => ({ text: w, matches: (words: readonly string[]) => words.includes(w) })),
  fc.tuple(word, word).map(([a, b]) => ({ text: `${a} ${b}`, matches: (words: readonly string[]) => words.includes(a) && words.includes(b) })),
  fc.tuple(word, word).map(([a, b]) => ({ text: `${a} OR ${b}`, matches: (words: readonly string[]) => words.includes(a) || words.includes(b) })),
  fc.tuple(word, word).filter(([a, b]) => a !== b).map(([a, b]) => ({ text: `${a} -${b}`, matches: (words: readonly string[]) => words.includes(a) && !words.includes(b) }))
)

const row = fc.record({
  words: fc.subarray([...WORDS], { maxLength: 3 }),
  tags: fc.option(fc.subarray([...TAGS]), { freq: 6 }),
  publishedAt: fc.option(fc.constantFrom(...INSTANTS), { freq: 4 }),
  updatedAt: fc.option(fc.constantFrom(...INSTANTS), { freq: 4 })
})
const rows = fc.uniqueArray(fc.stringMatching(/^[a-zA-Z0-9-]{1,6}$/), { minLength: 2, maxLength: 14 })
  .chain((slugs) => fc.tuple(...slugs.map((slug) => row.map((r): Row => ({ slug, ...r })))))

/** Mostly absent, so that combinations still match some rows. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })
const tagSet = sometimes(fc.subarray([...TAGS], { minLength: 1, maxLength: 3 }))
const bound = sometimes(fc.constantFrom(...BOUNDS))
const query = fc.record({
  q: sometimes(search),
  tag: tagSet,
  tagAll: tagSet,
  tagNot: tagSet,
  publishedAfter: bound,
  publishedBefore: bound,
  updatedAfter: bound,
  limit: fc.integer({ min: 1, max: 5 })
})
type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never

/** The query's parameters, each written in its own order (the tiers put them in theirs). */
function searchOf (q: Query): string {
  const parts: string[] = []
  if (q.tag !== null) parts.push(`tag=${q.tag.map(encodeURIComponent).reverse().join(',')}`)
  if (q.tagAll !== null) parts.push(`tag_all=${q.tagAll.map(encodeURIComponent).join(',')}`)
  if (q.tagNot !== null) parts.push(`tag_not=${q.tagNot.map(encodeURIComponent).join(',')}`)
  if (q.publishedAfter !== null) parts.push(`published_after=${q.publishedAfter[0]}`)
  if (q.publishedBefore !== null) parts.push(`published_before=${q.publishedBefore[0]}`)
  if (q.updatedAfter !== null) parts.push(`updated_after=${q.updatedAfter[0]}`)
  if (q.q !== null) parts.push(`q=${encodeURIComponent(q.q.text)}`)
  return parts.join('&')
}

/** Compares instants as text of the same form, so that the half-millisecond bound counts. */
const micros = (iso: string): string => {
  const [whole = '', fraction = ''] = iso.slice(0, -1).split('.')
  return `${whole}.${fraction.padEnd(6, '0')}`
}

/** The model: the rows the query keeps, in list order (newest first, undated last, ties by slug bytewise). */
function expected (all: readonly Row[], q: Query): string[] {
  const holds = (r: Row, tag: string): boolean => r.tags?.includes(tag) === true
  const after = (value: string | null, b: readonly [string, string] | null): boolean => b === null || (value !== null && micros(value) > micros(b[1]))
  const before = (value: string | null, b: readonly [string, string] | null): boolean => b === null || (value !== null && micros(value) < micros(b[1]))
  return all.filter((r) =>
    (q.tag === null || q.tag.some((t) => holds(r, t))) &&
    (q.tagAll === null || q.tagAll.every((t) => holds(r, t))) &&
    (q.tagNot === null || !q.tagNot.some((t) => holds(r, t))) &&
    after(r.publishedAt, q.publishedAfter) && before(r.publishedAt, q.publishedBefore) && after(r.updatedAt, q.updatedAfter) &&
    (q.q === null || q.q.matches(r.words))
  ).sort((a, b) => {
    if (a.publishedAt !== b.publishedAt) {
      if (a.publishedAt === null) return 1
      if (b.publishedAt === null) return -1
      return a.publishedAt < b.publishedAt ? 1 : -1
    }
    return Buffer.compare(Buffer.from(a.slug), Buffer.from(b.slug))
  }).map((r) => r.slug)
}

interface Variant {
  /** Creates `posts`; the default table unless the variant needs another `tags` type. */
  table: (db: TestDatabase) => Promise<void>
  timestamp: (iso: string | null) => string
  tags: (tags: readonly string[] | null) => string
}

const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`
/** JSON `null` for none (the default table's `tags` is NOT NULL on SQLite and PostgreSQL): no array, no tag. */
const jsonTags = (tags: readonly string[] | null): string => sqlText(JSON.stringify(tags))

const DEFAULT_TABLE = async (db: TestDatabase): Promise<void> => {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
}

/** The default table with the store's own search index. */
const INDEXED_TABLE = async (db: TestDatabase): Promise<void> => {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate({ search: DEFAULT_SEARCH_SETTINGS })
  await writer.close()
}

function describeModel (name: string, server: TestServer, variant: Variant): void {
  describe(`${name}: list queries against the model`, { skip: server.skip }, () => {
    let db: TestDatabase
    let tiers: Tiers
    before(async () => {
      db = await server.create()
      await variant.table(db)
      tiers = await startTiersOn(db)
    })
    after(async () => {
      await tiers?.close()
      await db?.drop()
    })

    async function load (all: readonly Row[]): Promise<void> {
      await db.exec('DELETE FROM posts')
      if (all.length === 0) return
      await db.exec(`INSERT INTO posts (slug, title, content, tags, published_at, updated_at) VALUES ${all.map((r) =>
        `(${sqlText(r.slug)}, ${sqlText(r.words.length === 0 ? 'T' : r.words.join(' '))}, '', ${variant.tags(r.tags)}, ${variant.timestamp(r.publishedAt)}, ${variant.timestamp(r.updatedAt)})`).join(', ')}`)
    }

    /** Every page of `search` at `route`, following next links; the front's empty list is a 404 no-posts. */
    async function walk (base: string, route: string, search: string, limit: number): Promise<string[]> {
      const slugs: string[] = []
      let target: string | undefined = `${route}?limit=${limit}${search === '' ? '' : `&${search}`}`
      for (let pages = 0; target !== undefined; pages++) {
        assert.ok(pages <= 20, 'the walk ends')
        const response = await get(base, target)
        if (response.status === 404 && route === '/api/blog' && slugs.length === 0) {
          assert.match(String(assertProblem(response, 'no-posts').detail), search === '' ? /^There are no posts yet\.$/ : /^No post matches /)
          return slugs
        }
        assert.equal(response.status, 200, `${target}: ${response.text}`)
        const page = (response.json() as Array<{ slug: string }>).map((p) => p.slug)
        if (page.length === 0 && slugs.length === 0 && route === '/api/posts') return slugs
        assert.ok(page.length <= limit && page.length > 0, `${target}: ${page.length} posts`)
        slugs.push(...page)
        target = /^<([^<>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1]
      }
      return slugs
    }

    test(`${RUNS} random tables and queries: the list, its pages and their walk through both tiers equal the model`, { timeout: 600_000 }, async (t) => {
      let nonEmpty = 0
      let asked = 0
      const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
      await fc.assert(fc.asyncProperty(rows, fc.array(query, { minLength: 1, maxLength: 3 }), async (all, queries) => {
        await load(all)
        // Every tag with its number of posts, at both tiers, exactly fresh.
        const tagCounts = TAGS.map((tag) => ({ tag, count: all.filter((r) => r.tags?.includes(tag) === true).length })).filter((t) => t.count > 0)
          .sort((a, b) => b.count - a.count || Buffer.compare(Buffer.from(a.tag), Buffer.from(b.tag)))
        assert.deepEqual((await get(tiers.posts.url, '/api/posts/tags')).json(), tagCounts)
        assert.deepEqual((await get(tiers.front.url, '/api/tags')).json(), tagCounts)
        for (const q of queries) {
          const want = expected(all, q)
          asked++
          if (want.length > 0) nonEmpty++
          const search = searchOf(q)
          const whole = await get(tiers.posts.url, `/api/posts${search === '' ? '' : `?${search}`}`)
          assert.equal(whole.status, 200, whole.text)
          assert.equal(whole.headers['x-total-count'], undefined)
          // The count: every post the filters keep, whatever the page, at both tiers.
          const counted = `limit=${q.limit}&count=exact${search === '' ? '' : `&${search}`}`
          assert.equal((await get(tiers.posts.url, `/api/posts?${counted}`)).headers['x-total-count'], String(want.length), counted)
          if (want.length > 0) assert.equal((await get(tiers.front.url, `/api/blog?${counted}`)).headers['x-total-count'], String(want.length), counted)
          const listed = (whole.json() as Array<{ slug: string }>).map((p) => p.slug)
          // A search's order is its relevance, which the model does not compute: its members, then every walk in its order.
          if (q.q === null) assert.deepEqual(listed, want, `/api/posts?${search}`)
          else assert.deepEqual([...listed].sort(), [...want].sort(), `/api/posts?${search}`)
          assert.deepEqual(await walk(tiers.posts.url, '/api/posts', search, q.limit), listed, `walk /api/posts?${search}`)
          assert.deepEqual(await walk(tiers.front.url, '/api/blog', search, q.limit), listed, `walk /api/blog?${search}`)
        }
      }), { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`${name}: ${RUNS} tables, ${asked} queries, ${nonEmpty} with a non-empty answer`)
    })
  })
}

const isoText = (iso: string | null): string => iso === null ? 'NULL' : sqlText(iso)

describeModel('SQLite', sqliteServer, { table: DEFAULT_TABLE, timestamp: isoText, tags: jsonTags })
describeModel('SQLite with migrate --search', sqliteServer, { table: INDEXED_TABLE, timestamp: isoText, tags: jsonTags })
describeModel('PostgreSQL', postgresServer, { table: DEFAULT_TABLE, timestamp: isoText, tags: jsonTags })
describeModel('PostgreSQL with migrate --search', postgresServer, { table: INDEXED_TABLE, timestamp: isoText, tags: jsonTags })
describeModel('PostgreSQL text[] tags', postgresServer, {
  table: async (db) => {
    await db.exec(`CREATE TABLE posts (id serial PRIMARY KEY, slug text NOT NULL UNIQUE, title text, content text, tags text[],
      published_at timestamp, updated_at timestamptz)`)
  },
  timestamp: isoText,
  tags: (tags) => tags === null ? 'NULL' : `ARRAY[${tags.map(sqlText).join(', ')}]::text[]`
})
describeModel('MySQL with migrate --search', mysqlServer, {
  table: INDEXED_TABLE,
  timestamp: (iso) => iso === null ? 'NULL' : sqlText(iso.slice(0, 23).replace('T', ' ')),
  tags: jsonTags
})
