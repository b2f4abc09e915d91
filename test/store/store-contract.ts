// One suite, run against every store: value normalisation, order, exact slug match, schema
// checks; with its freshness (freshness-contract.ts) and its list queries
// (list-query-contract.ts). Real servers, real HTTP.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import fc from 'fast-check'
import type { SettingName } from '../../src/config.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { isLookupableSlug } from '../../src/contract/slug.js'
import { StoreSchemaError, type Post } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { parseMetrics, samplesOf, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { RawKeepAliveClient } from '../helpers/raw-http.js'
import { sqlLookingSlug, sqlString, STORED_SLUGS, STORED_WHERE_ALLOWED } from '../helpers/sql-slugs.js'
import { silentLogger } from '../helpers/tiers.js'
import { declareFreshnessTests } from './freshness-contract.js'
import { describeListQueryContract } from './list-query-contract.js'
import { useStoreContractSuite, type StoreFixture } from './store-contract-suite.js'

/** Fuzzed upstream lookups per store (a few hundred). */
const SLUG_FUZZ_RUNS = 400

/** `settings`: what every store of the suite is opened with, over the settings table's defaults. */
export function describeStoreContract (name: string, server: TestServer, fixture: StoreFixture, settings: Partial<Record<SettingName, string>> = {}): void {
  const config = testConfig(settings)

  describe(`${name} store contract`, { skip: server.skip }, () => {
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

    test('migrate is idempotent and seed inserts the sample posts once', async () => {
      const writer = await openTestStore(db.location, { writable: true, config })
      try {
        await writer.migrate()
        await writer.migrate()
        await writer.checkSchema()
        assert.equal(await writer.seed(), 3)
        assert.equal(await writer.seed(), 0)
        const posts: Post[] = []
        for await (const batch of writer.streamPosts()) posts.push(...batch)
        assert.deepEqual(posts.map((p) => p.slug), ['slugs-and-stores', 'two-tiers', 'hello-world'])
        assert.deepEqual(posts[2]?.tags, ['intro'])
        assert.equal(posts[2]?.published_at, '2026-01-05T09:00:00.000Z')
      } finally {
        await writer.close()
      }
    })

    test('a database without a posts table, or a posts table without slug, is refused', async () => {
      const missing = await openTestStore(db.location, { config })
      await assert.rejects(missing.checkSchema(), (err: unknown) => err instanceof StoreSchemaError && /no `posts` table/.test(err.message))
      await missing.close()
      await db.exec('CREATE TABLE posts (id INTEGER, title VARCHAR(20))')
      const noSlug = await openTestStore(db.location, { config })
      await assert.rejects(noSlug.checkSchema(), (err: unknown) => err instanceof StoreSchemaError && /no `slug` column/.test(err.message))
      await noSlug.close()
    })

    test('a table that disappears is a 503 with Retry-After, and comes back without a restart', async () => {
      const store = await migratedStore()
      await db.exec(insert('first-post', '2024-01-01T00:00:00Z'))
      await withTiers(store, async ({ posts, front }) => {
        assert.equal((await get(front.url, '/api/blog/first-post')).status, 200)
        await db.exec('ALTER TABLE posts RENAME TO posts_away')
        const down = await get(posts.url, '/api/post/first-post')
        assertProblem(down, 'store-unavailable')
        assert.match(String(down.headers['retry-after']), /^[1-5]$/)
        const relayed = await get(front.url, '/api/blog')
        assertProblem(relayed, 'upstream-unavailable')
        assert.match(String(relayed.headers['retry-after']), /^[1-5]$/)
        await db.exec('ALTER TABLE posts_away RENAME TO posts')
        assert.equal((await get(front.url, '/api/blog/first-post')).status, 200)
      })
    })

    test('metrics: the store reads by kind, and the pool of a server store (in use, idle, waiting)', async () => {
      const store = await migratedStore()
      await db.exec(insert('first-post', '2024-01-01T00:00:00Z'))
      const app = buildPostsApp({ store, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server, metrics: createProcessMetrics() })
      try {
        assert.equal((await app.inject('/api/post/first-post')).statusCode, 200)
        const samples = parseMetrics((await app.inject('/metrics')).body)
        assert.equal(valueOf(samples, 'blog_read_api_store_query_duration_seconds_count', { kind: 'post' }), 1)
        // A change-token read where the store keeps one (SQLite, PostgreSQL with its trigger); none on MySQL.
        assert.equal(valueOf(samples, 'blog_read_api_store_query_duration_seconds_count', { kind: 'token' }), store.tracksChanges ? 1 : 0)
        const pool = samplesOf(samples, 'blog_read_api_store_pool_connections')
        if (store.dialect === 'sqlite') {
          assert.deepEqual(pool, [])
        } else {
          assert.deepEqual(pool.map((s) => s.labels.state).sort(), ['idle', 'in_use'])
          assert.ok(valueOf(samples, 'blog_read_api_store_pool_connections', { state: 'idle' }) >= 1, 'the connection used is back in the pool')
          assert.equal(valueOf(samples, 'blog_read_api_store_pool_connections', { state: 'in_use' }), 0)
          assert.equal(valueOf(samples, 'blog_read_api_store_pool_waiting'), 0)
        }
      } finally {
        await app.close()
        await store.close()
      }
    })

    test('readiness: the post API is 503 not-ready while its table is renamed away, and 200 after', async () => {
      const store = await migratedStore()
      await withTiers(store, async ({ posts }) => {
        assert.equal((await get(posts.url, '/readyz')).status, 200)
        await db.exec('ALTER TABLE posts RENAME TO posts_away')
        // The check runs at most once a second: the next probes may still see the last result.
        const down = await pollUntil('not ready', async () => {
          const answer = await get(posts.url, '/readyz')
          return answer.status === 200 ? false : answer
        }, { withinMs: 5000, everyMs: 100 })
        assert.equal(assertProblem(down, 'not-ready').detail, 'The post store is not answering.')
        assert.equal((await get(posts.url, '/healthz')).status, 200, 'alive all the same')
        await db.exec('ALTER TABLE posts_away RENAME TO posts')
        await pollUntil('ready again', async () => (await get(posts.url, '/readyz')).status === 200, { withinMs: 5000, everyMs: 100 })
      })
    })

    declareFreshnessTests(suite)
  })
  describeListQueryContract(name, server, fixture)
}
