// The store contract's operations, on every store: `migrate` and `seed` run twice safely; a
// database without the table or its slug is refused at start-up; a table gone at run time is a
// 503 with Retry-After, then served again without a restart, and the post API not ready
// meanwhile; the store's reads and pool in the metrics. Part of the store contract suite
// (store-contract.ts).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { StoreSchemaError, type Post } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { parseMetrics, samplesOf, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { silentLogger } from '../helpers/tiers.js'
import type { StoreContractSuite } from './store-contract-suite.js'

/** Declares the tests of the store's operations in the describe of `suite`. */
export function declareOperationsTests (suite: StoreContractSuite): void {
  const { config, migratedStore, withTiers, insert } = suite
  let db: TestDatabase
  before(() => { db = suite.db() })

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
}
