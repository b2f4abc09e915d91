// Hostile cursors on every store, through both tiers: an `after` of random JSON, of near-miss
// timestamps (odd zones, out-of-range fields, eras), or of random text, with or without a
// `sort` (its own or another), is a page or a 400 invalid-query, never a 5xx. SQLite always; PostgreSQL and MySQL when their test servers are
// set (mandatory in CI), as the store suites run.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { mysqlServer, postgresServer, seedTestStore, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiersOn, type Tiers } from '../helpers/tiers.js'
import { SORT_COLUMNS, sortOrder, type ListSort } from '../../src/contract/list-sort.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Generated cursors per store (each sent to the post API and to the front). */
const RUNS = 500

/** Cursors that once reached PostgreSQL's timestamp parser and failed there (500, 502 at the front). */
const FIXED = [
  'WyIyMDI0LTAxLTAxIDAwOjAwIEZvby9CYXIiLCJwLTAwMDAxIl0', // ["2024-01-01 00:00 Foo/Bar","p-00001"]
  'WyIyMDI0LTAxLTAxIDAwOjAwOjAwIFVUQys1MDAwIiwieCJd' // ["2024-01-01 00:00:00 UTC+5000","x"]
]

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const pad = (width: number) => (n: number): string => String(n).padStart(width, '0')

/** Timestamps built of plausible and implausible parts: each store's grammar must sort them out. */
const timestampText = fc.tuple(
  fc.oneof(fc.integer({ min: 0, max: 9999 }).map(pad(4)), fc.constantFrom('294277', '5874898', '0000', '10000', '-1')),
  fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 12 }) }, fc.constantFrom(0, 13)).map(pad(2)),
  fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 28 }) }, fc.integer({ min: 0, max: 32 })).map(pad(2)),
  fc.oneof(fc.constant(''), {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom(' ', ' ', 'T'), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }))
      .map(([sep, h, m, s]) => `${sep}${pad(2)(h)}:${pad(2)(m)}:${pad(2)(s)}`)
  }),
  fc.constantFrom('', '', '.5', '.123', '.123456', '.1234567'),
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom('', '+00', '-05:30') }, fc.constantFrom('Z', '+00', '-05:30', '+15:59:59', '+16', ' UTC', ' Foo/Bar', ' UTC+5000', ' PST8PDT', ' Europe/Paris', ' BC', '+00 BC', ' AD', ' allballs'), fc.string({ maxLength: 8 }))
).map((parts) => parts.join(''))

/** Timestamps as PostgreSQL or MySQL write them (these reach the query), and one-character near misses. */
const storeTimestamp = fc.tuple(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }), fc.constantFrom('+00', ''))
  .map(([date, zone]) => `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 23)}${zone}`)
const nearTimestamp = storeTimestamp.chain((text) => fc.tuple(fc.nat(text.length), fc.string({ minLength: 1, maxLength: 2 }))
  .map(([i, ch]) => text.slice(0, i) + ch + text.slice(i + 1)))

const slug = fc.oneof(fc.constantFrom('alpha', 'welcome', 'p-00001', 'x'), fc.string({ minLength: 1, maxLength: 20 }))

/** Arrays shaped like cursors (most reach a store), other JSON, and text that is no cursor at all. */
const cursor = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.oneof(timestampText, storeTimestamp, nearTimestamp), slug).map(encode) },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.double(), fc.bigInt().map(String), fc.constantFrom('infinity', '-infinity', 'NaN', 'now', 'epoch', 'today')), slug).map(encode) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(encode) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) }
)

const SORTS: readonly ListSort[] = SORT_COLUMNS.flatMap((column): ListSort[] => [column, `-${column}`])

/** Cursors of a sorted list (`{"<sort>": [value, slug]}`), sent with their own sort mostly, or another. */
const sortedCursor = fc.tuple(
  fc.constantFrom(...SORTS),
  fc.oneof(timestampText, storeTimestamp, nearTimestamp, fc.jsonValue({ maxDepth: 1 }), fc.string({ maxLength: 12 })),
  slug,
  fc.option(fc.constantFrom(...SORTS), { freq: 3 })
).map(([named, value, key, other]) => ({
  after: encode({ [named]: sortOrder(named).column === 'slug' ? [key] : [value, key] }),
  sort: other ?? named
}))

/** `typedDates`: whether the default table's published_at is a timestamp type (SQLite's is any value, so any text pages). */
function describeCursorFuzz (name: string, server: TestServer, typedDates: boolean): void {
  describeOrSkip(`${name}: hostile cursors`, { skip: server.skip }, () => {
    let db: TestDatabase
    let tiers: Tiers
    before(async () => {
      db = await server.create()
      await seedTestStore(db.location)
      tiers = await startTiersOn(db)
    })
    after(async () => {
      await tiers?.close()
      await db?.drop()
    })

    const send = async (after: string, sort?: ListSort): Promise<number> => {
      let refused = 0
      const search = `limit=2&after=${encodeURIComponent(after)}${sort === undefined ? '' : `&sort=${sort}`}`
      for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
        const response = await get(base, `${route}?${search}`)
        assert.ok(response.status < 500, `${route} after=${after}: ${response.status} ${response.text}`)
        if (response.status === 400) {
          assertProblem(response, 'invalid-query')
          refused++
        } else {
          assert.ok([200, 404].includes(response.status), `${route} after=${after}: ${response.status}`)
        }
      }
      return refused
    }

    test(`the cursors PostgreSQL could not parse are ${typedDates ? 'a 400 invalid-query' : 'a page'} at both tiers`, async () => {
      for (const after of FIXED) assert.equal(await send(after), typedDates ? 2 : 0, after)
    })

    test(`${RUNS} random cursors: never a 5xx at either tier`, { timeout: 300_000 }, async (t) => {
      let refused = 0
      const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
      await fc.assert(fc.asyncProperty(cursor, async (after) => { refused += await send(after) }),
        { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`${name}: ${RUNS} fuzzed cursors (+${FIXED.length} fixed), each sent to both tiers; ${refused} of ${RUNS * 2} answers were 400`)
    })

    test(`${RUNS} random cursors of sorted lists: never a 5xx at either tier`, { timeout: 300_000 }, async (t) => {
      let refused = 0
      const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
      await fc.assert(fc.asyncProperty(sortedCursor, async ({ after, sort }) => { refused += await send(after, sort) }),
        { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`${name}: ${RUNS} fuzzed sorted cursors, each sent to both tiers; ${refused} of ${RUNS * 2} answers were 400`)
    })
  })
}

describeCursorFuzz('SQLite', sqliteServer, false)
describeCursorFuzz('PostgreSQL', postgresServer, true)
describeCursorFuzz('MySQL', mysqlServer, true)
