// One suite, run against every store: value normalisation, order, exact slug match; with its
// freshness (freshness-contract.ts), its operations (operations-contract.ts) and its list queries
// (list-query-contract.ts). Real servers, real HTTP.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import type { SettingName } from '../../src/config.js'
import { isLookupableSlug } from '../../src/contract/slug.js'
import { testConfig } from '../helpers/config.js'
import type { TestDatabase, TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { RawKeepAliveClient } from '../helpers/raw-http.js'
import { sqlLookingSlug, sqlString, STORED_SLUGS, STORED_WHERE_ALLOWED } from '../helpers/sql-slugs.js'
import { declareFreshnessTests } from './freshness-contract.js'
import { describeListQueryContract } from './list-query-contract.js'
import { declareOperationsTests } from './operations-contract.js'
import { useStoreContractSuite, type StoreFixture } from './store-contract-suite.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Fuzzed upstream lookups per store (a few hundred). */
const SLUG_FUZZ_RUNS = 400

/** `settings`: what every store of the suite is opened with, over the settings table's defaults. */
export function describeStoreContract (name: string, server: TestServer, fixture: StoreFixture, settings: Partial<Record<SettingName, string>> = {}): void {
  const config = testConfig(settings)

  describeOrSkip(`${name} store contract`, { skip: server.skip }, () => {
    const suite = useStoreContractSuite(name, server, fixture, config)
    const { migratedStore, servingStore, withTiers, insert } = suite
    let db: TestDatabase
    before(() => { db = suite.db() })

    test('values are normalised the same way on every store, through both tiers', async () => {
      for (const statement of fixture.normalisationTable) await db.exec(statement)
      await withTiers(await servingStore(), async ({ posts, front }) => {
        const direct = await get(posts.url, '/api/post/first-post')
        assert.equal(direct.status, 200)
        assert.deepEqual(direct.json(), fixture.expectedFirstPost)
        const relayed = await get(front.url, '/api/blog/first-post')
        assert.deepEqual(relayed.json(), fixture.expectedFirstPost)
        const list = (await get(front.url, '/api/blog')).json() as Array<Record<string, unknown>>
        assert.deepEqual(list.find((p) => p.slug === 'first-post'), fixture.expectedFirstPost)
      })
    })

    test('the list is newest first, unpublished last, ties and the rest by slug bytes', async () => {
      const store = await migratedStore()
      for (const [slug, at] of [['alpha', '2024-03-01T00:00:00Z'], ['draft-b', null], ['oldest', '2024-01-01T00:00:00Z'],
        ['a1', '2024-03-01T00:00:00Z'], ['Zed', '2024-03-01T00:00:00Z'], ['newest', '2024-05-01T00:00:00Z'],
        ['a-b', '2024-03-01T00:00:00Z'], ['draft-a', null]] as const) {
        await db.exec(insert(slug, at))
      }
      await withTiers(store, async ({ front }) => {
        const slugs = ((await get(front.url, '/api/blog')).json() as Array<{ slug: string }>).map((p) => p.slug)
        assert.deepEqual(slugs, ['newest', 'Zed', 'a-b', 'a1', 'alpha', 'oldest', 'draft-a', 'draft-b'])
      })
    })

    test('a streamed list comes in batches, none empty, that make the whole list in order, keyed or not', async () => {
      const store = await migratedStore()
      // More rows than any store reads at once, so that the list takes several batches.
      const rows = Array.from({ length: 1000 }, (_, i) => `('p-${String(i).padStart(4, '0')}', 'T', '${'x'.repeat(200)}', ${fixture.timestamp(`2024-01-01T00:${String(i % 60).padStart(2, '0')}:00Z`)})`)
      await db.exec(`INSERT INTO posts (slug, title, content, published_at) VALUES ${rows.join(', ')}`)
      try {
        const whole = (await store.readPage({ limit: 1000 })).posts.map((post) => post.slug)
        assert.equal(whole.length, 1000)
        const batches: string[][] = []
        for await (const posts of store.streamPosts()) batches.push(posts.map((post) => post.slug))
        assert.ok(batches.length > 1, `${name}: ${batches.length} batch`)
        assert.ok(batches.every((batch) => batch.length > 0), 'an empty batch')
        assert.deepEqual(batches.flat(), whole)
        const keyed: string[] = []
        for await (const posts of store.streamKeyedPosts()) for (const { key, post } of posts) keyed.push(`${key.slug}=${post.slug}`)
        assert.deepEqual(keyed, whole.map((slug) => `${slug}=${slug}`))
        // A reader that leaves after the first batch (a client gone, a list too large to hold)
        // ends the stream cleanly, and the next one reads the whole list again.
        for await (const posts of store.streamPosts()) if (posts.length > 0) break
        const again: string[] = []
        for await (const posts of store.streamPosts()) again.push(...posts.map((post) => post.slug))
        assert.deepEqual(again, whole)
      } finally {
        await store.close()
      }
    })

    test('a table without published_at is ordered by slug bytes', async () => {
      await db.exec('CREATE TABLE posts (slug VARCHAR(50) NOT NULL PRIMARY KEY, title VARCHAR(50))')
      await db.exec("INSERT INTO posts (slug, title) VALUES ('b', 'B'), ('Z', 'Z'), ('a', 'A')")
      await withTiers(await servingStore(), async ({ posts }) => {
        assert.deepEqual((await get(posts.url, '/api/posts')).json(), [{ slug: 'Z', title: 'Z' }, { slug: 'a', title: 'A' }, { slug: 'b', title: 'B' }])
      })
    })

    test('the slug match is exact: case, accents and trailing spaces count', async () => {
      const store = await migratedStore()
      await db.exec(insert('first-post', '2024-01-01T00:00:00Z'))
      await db.exec(insert('cafe', '2024-01-01T00:00:00Z'))
      await withTiers(store, async ({ posts, front }) => {
        assert.equal((await get(posts.url, '/api/post/first-post')).status, 200)
        for (const slug of ['First-Post', 'FIRST-POST', 'first-post%20', 'caf%C3%A9', 'CAFE', 'first-pos']) {
          assertProblem(await get(posts.url, `/api/post/${slug}`), 'post-not-found')
        }
        assertProblem(await get(front.url, '/api/blog/first-pos'), 'post-not-found')
      })
    })

    test('SQL-looking slugs find nothing and never fail', async () => {
      const store = await migratedStore()
      await db.exec(insert('first-post', '2024-01-01T00:00:00Z'))
      await withTiers(store, async ({ posts }) => {
        for (const slug of ["' OR '1'='1", "first-post' --", 'first-post" OR 1=1', '%', '_', 'first%', "'; DROP TABLE posts; --", '\\', 'first-post\\']) {
          assertProblem(await get(posts.url, `/api/post/${encodeURIComponent(slug)}`), 'post-not-found')
        }
        assert.equal((await get(posts.url, '/api/posts')).status, 200)
      })
    })

    test('fuzzed SQL-looking slugs: never a 5xx, only a 404 or exactly the row with that slug', { timeout: 60_000 }, async () => {
      const store = await migratedStore()
      const titles = new Map<string, string>()
      for (const [i, slug] of [...STORED_SLUGS, ...STORED_WHERE_ALLOWED].entries()) {
        const inserted = await db.exec(`INSERT INTO posts (slug, title, content) VALUES (${sqlString(slug)}, 'row-${i}', 'c')`)
          .then(() => true, (err: unknown) => { if (STORED_WHERE_ALLOWED.includes(slug)) return false; throw err })
        if (inserted) titles.set(slug, `row-${i}`)
      }
      await withTiers(store, async ({ posts }) => {
        // Raw keep-alive requests: a URL library would resolve a `.`/`..` slug away before sending.
        const client = new RawKeepAliveClient(posts.port)
        const lookup = async (slug: string): Promise<TestResponse> => {
          const response = await client.get(Buffer.from('/api/post/' + encodeURIComponent(slug)))
          const text = response.body.toString('utf8')
          return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
        }
        try {
          for (const [slug, title] of titles) assert.equal(((await lookup(slug)).json() as { title?: unknown }).title, title, `stored ${JSON.stringify(slug)}`)
          await fc.assert(fc.asyncProperty(sqlLookingSlug, async (slug) => {
            const response = await lookup(slug)
            const title = titles.get(slug)
            if (!isLookupableSlug(slug)) assertProblem(response, 'invalid-slug')
            else if (title === undefined) assertProblem(response, 'post-not-found')
            else assert.deepEqual([response.status, (response.json() as { slug?: unknown }).slug, (response.json() as { title?: unknown }).title], [200, slug, title])
          }), { numRuns: SLUG_FUZZ_RUNS, includeErrorInReport: true })
        } finally {
          client.close()
        }
        // Nothing was written or dropped by any of them.
        const slugs = ((await get(posts.url, '/api/posts')).json() as Array<{ slug: string }>).map((p) => p.slug)
        assert.deepEqual(slugs.sort(), [...titles.keys()].sort())
      })
    })

    declareFreshnessTests(suite)
    declareOperationsTests(suite)
  })
  describeListQueryContract(name, server, fixture)
}
