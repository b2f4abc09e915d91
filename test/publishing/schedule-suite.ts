// The publishing rule and time, run against every store: scheduled posts appear on time with no
// write through both tiers, published_at is read as a time whatever its type, and a property
// test against a reference model over random rows (every deciding column) and clock times.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { after, before, test } from 'node:test'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { createClock, createTable, insertRows, isPublic, startPublishingTiers } from './publishing-fixture.js'
import { NOW, ROWS, SCHEDULED_AT, slugsOf, walkPages } from './publishing-suite.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const maxAgeOf = (response: TestResponse): number | undefined => {
  const match = /max-age=(\d+)/.exec(String(response.headers['cache-control']))
  return match === null ? undefined : Number(match[1])
}

const MINUTE = 60_000
const PROPERTY_SLUGS = ['alpha', 'bravo', 'charlie', 'delta', 'echo']

const around = (minutes: number): number => NOW + minutes * MINUTE
/** Rows with every deciding column random: flags true, false or NULL, statuses in any case or none, dates past, future or none. */
const rowsArbitrary = fc.uniqueArray(fc.record({
  slug: fc.constantFrom(...PROPERTY_SLUGS),
  draft: fc.constantFrom(null, true, false),
  published: fc.constantFrom(null, true, false),
  status: fc.constantFrom(null, 'published', 'Published', 'draft'),
  deletedAt: fc.option(fc.integer({ min: -3, max: 3 }).map(around), { nil: null }),
  publishedAt: fc.option(fc.integer({ min: -3, max: 3 }).map(around), { nil: null })
}), { selector: (row) => row.slug, maxLength: PROPERTY_SLUGS.length })

/** Clock times around NOW, in order: a clock moves forward. */
const timesArbitrary = fc.array(fc.integer({ min: -4 * MINUTE, max: 4 * MINUTE }), { minLength: 1, maxLength: 4 })
  .map((offsets) => offsets.sort((a, b) => a - b).map((offset) => NOW + offset))

export function describeSchedule (name: string, server: TestServer, { propertyRuns = 30 }: { propertyRuns?: number } = {}): void {
  describeOrSkip(`scheduled posts and time on ${name}`, { skip: server.skip }, () => {
    let database: TestDatabase
    before(async () => {
      database = await server.create()
      await createTable(database, ROWS)
    })
    after(async () => { await database?.drop() })

    test('a scheduled post appears at its instant through both tiers with no write, and no max-age outlives the instant', async () => {
      const clock = createClock(NOW)
      const tiers = await startPublishingTiers(database, { publishedOnly: true, clock, cacheControl: 'public, max-age=86400' })
      try {
        const routes = [[tiers.front.url, '/api/blog', '/api/blog/scheduled'], [tiers.posts.url, '/api/posts', '/api/post/scheduled']] as const
        for (const [at, visible, maxAge] of [[NOW, false, 3600], [SCHEDULED_AT - 1, false, 0], [SCHEDULED_AT, true, 86400]] as const) {
          clock.set(at)
          for (const [base, list, detail] of routes) {
            // Twice: the second answer comes from what the first left held (bodies, copies).
            for (let i = 0; i < 2; i++) {
              const answer = await get(base, list)
              assert.equal(slugsOf(answer).includes('scheduled'), visible, `${base}${list} at ${at - NOW} ms`)
              assert.equal(maxAgeOf(answer), maxAge, `${base}${list} at ${at - NOW} ms`)
              assert.equal(await walkPages(base, list).then((slugs) => slugs.includes('scheduled')), visible)
              const post = await get(base, detail)
              assert.equal(post.status, visible ? 200 : 404, `${base}${detail} at ${at - NOW} ms`)
              if (visible) assert.equal(maxAgeOf(post), maxAge)
            }
          }
        }
      } finally {
        await tiers.close()
      }
    })

    test('detail answers link to their published neighbours, each tier to its own route, and a scheduled post moves them on time', async () => {
      const clock = createClock(NOW)
      const tiers = await startPublishingTiers(database, { publishedOnly: true, clock })
      try {
        const linkOf = async (base: string, path: string, etag?: string): Promise<{ status: number, link: unknown, etag: unknown }> => {
          const answer = await get(base, path, etag === undefined ? {} : { 'if-none-match': etag })
          return { status: answer.status, link: answer.headers.link, etag: answer.headers.etag }
        }
        // Public now: null-flags, live, Legacy-Case (newest first); the front refuses Legacy-Case's slug, so links no such neighbour.
        assert.equal((await linkOf(tiers.posts.url, '/api/post/live')).link, '</api/post/null-flags>; rel="prev", </api/post/Legacy-Case>; rel="next"')
        assert.equal((await linkOf(tiers.front.url, '/api/blog/live')).link, '</api/blog/null-flags>; rel="prev"')
        assert.equal((await linkOf(tiers.posts.url, '/api/post/Legacy-Case')).link, '</api/post/live>; rel="prev"')
        const before = { posts: await linkOf(tiers.posts.url, '/api/post/null-flags'), front: await linkOf(tiers.front.url, '/api/blog/null-flags') }
        assert.equal(before.posts.link, '</api/post/live>; rel="next"')
        assert.equal(before.front.link, '</api/blog/live>; rel="next"')
        clock.set(SCHEDULED_AT)
        // The same body, new neighbours: never a 304 for the old validator.
        for (const [base, path, tier, route] of [[tiers.posts.url, '/api/post/null-flags', 'posts', '/api/post/'], [tiers.front.url, '/api/blog/null-flags', 'front', '/api/blog/']] as const) {
          const after = await linkOf(base, path, String(before[tier].etag))
          assert.equal(after.status, 200, path)
          assert.equal(after.link, `<${route}scheduled>; rel="prev", <${route}live>; rel="next"`)
          assert.notEqual(after.etag, before[tier].etag)
          assert.equal((await linkOf(base, path, String(after.etag))).status, 304)
        }
        assert.equal((await linkOf(tiers.front.url, '/api/blog/scheduled')).link, '</api/blog/null-flags>; rel="next"')
      } finally {
        await tiers.close()
      }
    })

    test('published_at is compared with now as a time, whatever the column type holds', async () => {
      // NOW is 2025-06-01T12:00:00Z; each case: a column type, its value (SQL), and whether it is public at NOW.
      const cases: Record<string, Array<[type: string, value: string, visible: boolean]>> = {
        sqlite: [
          ['TEXT', "'2025-06-01T11:59:59Z'", true], ['TEXT', "'2025-06-01 12:00:01'", false], ['TEXT', "'2025-06-01T13:00:00+02:00'", true],
          ['TEXT', "'2025-06-01T12:00:00.000Z'", true], ['INTEGER', '1748779199', true], ['INTEGER', '1748779201', false], ['TEXT', "'not a date'", false]
        ],
        postgres: [
          ['timestamptz', "'2025-06-01T11:59:59Z'", true], ['timestamptz', "'2025-06-01T14:00:01+02:00'", false],
          ['timestamp', "'2025-06-01 11:59:59'", true], ['timestamp', "'2025-06-01 12:00:01'", false], ['date', "'2025-06-01'", true], ['date', "'2025-06-02'", false]
        ],
        mysql: [
          ['DATETIME(3)', "'2025-06-01 11:59:59.999'", true], ['DATETIME(3)', "'2025-06-01 12:00:00.001'", false], ['TIMESTAMP', "'2025-06-01 12:00:00'", true],
          ['DATE', "'2025-06-01'", true], ['DATE', "'2025-06-02'", false], ['VARCHAR(40)', "'2025-06-01 11:00:00'", true], ['VARCHAR(40)', "'garbage'", false]
        ]
      }
      const { dialect } = database.location
      for (const [i, [type, value, visible]] of (cases[dialect] ?? []).entries()) {
        const db = await server.create()
        try {
          await db.exec(`CREATE TABLE posts (slug VARCHAR(100) NOT NULL PRIMARY KEY, published_at ${type} NULL)`)
          await db.exec(`INSERT INTO posts (slug, published_at) VALUES ('case-${i}', ${value})`)
          const store = await openTestStore(db.location, { publishing: { publishedOnly: true, now: () => NOW } })
          try {
            await store.checkSchema()
            assert.equal((await store.findPostBySlug(`case-${i}`)) !== undefined, visible, `${type} ${value}`)
          } finally {
            await store.close()
          }
        } finally {
          await db.drop()
        }
      }
      if (dialect === 'postgres') {
        const db = await server.create()
        try {
          await db.exec('CREATE TABLE posts (slug text PRIMARY KEY, published_at text)')
          const store = await openTestStore(db.location, { publishing: { publishedOnly: true, now: () => NOW } })
          try {
            await assert.rejects(store.checkSchema(), /PUBLISHED_ONLY cannot apply: published_at is of type text/)
          } finally {
            await store.close()
          }
        } finally {
          await db.drop()
        }
      }
    })

    test('property: no answer, held or not, ever holds a post the rule hides at the time of the answer: lists, pages, counts, details', async () => {
      const property = await server.create()
      await createTable(property, [])
      const clock = createClock(NOW)
      const tiers = await startPublishingTiers(property, { publishedOnly: true, clock })
      try {
        await fc.assert(fc.asyncProperty(rowsArbitrary, timesArbitrary, async (rows, times) => {
          await property.exec('DELETE FROM posts')
          if (rows.length > 0) await property.exec(insertRows(property.location.dialect, rows))
          for (const at of times) {
            clock.set(at)
            const expected = rows.filter((row) => isPublic(row, at)).map((row) => row.slug).sort()
            for (const [base, list, detail] of [[tiers.front.url, '/api/blog', '/api/blog/'], [tiers.posts.url, '/api/posts', '/api/post/']] as const) {
              const where = `${base}${list} at ${at - NOW} ms`
              for (let i = 0; i < 2; i++) {
                const answer = await get(base, list)
                // The front answers an empty list with a problem.
                const served = answer.status === 200 ? slugsOf(answer).sort() : []
                assert.deepEqual(served, expected, where)
                const counted = await get(base, `${list}?count=exact&limit=1`)
                assert.equal(counted.headers['x-total-count'] ?? '0', String(expected.length), `${where}: count=exact`)
                if (expected.length > 0) assert.deepEqual((await walkPages(base, list)).sort(), expected, `${where}: pages`)
                for (const { slug } of rows) {
                  assert.equal((await get(base, detail + slug)).status, expected.includes(slug) ? 200 : 404, `${base}${detail}${slug} at ${at - NOW} ms`)
                }
              }
            }
          }
        }), { numRuns: propertyRuns })
      } finally {
        await tiers.close()
        await property.drop()
      }
    })
  })
}
