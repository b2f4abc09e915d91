// The post API's metrics over a real SQLite store, read back from its GET /metrics: requests by
// route and status, store reads by kind (the change token before each answer), bodies built or
// reused, store errors by kind; no pool gauges where there is no pool.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { StoreQueryError, type PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { fromInject } from '../helpers/http.js'
import { parseMetrics, samplesOf, valueOf } from '../helpers/metrics-text.js'
import { assertProblem } from '../helpers/problem.js'
import { silentLogger } from '../helpers/tiers.js'

let db: TestDatabase
let store: PostStore

before(async () => {
  db = await sqliteServer.create()
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
  await db.exec("INSERT INTO posts (slug, title, content) VALUES ('first-post', 'First', 'Hello')")
  store = await openTestStore(db.location)
  await store.checkSchema()
})
after(async () => {
  await store.close()
  await db.drop()
})

test('after 200, 304, 404, 400, a list and a store outage, the counters read exactly that', async () => {
  const app = buildPostsApp({ store, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server, metrics: createProcessMetrics() })
  try {
    const first = await app.inject('/api/post/first-post')
    assert.equal(first.statusCode, 200)
    assert.equal((await app.inject({ url: '/api/post/first-post', headers: { 'if-none-match': String(first.headers.etag) } })).statusCode, 304)
    assert.equal((await app.inject('/api/post/missing')).statusCode, 404)
    assert.equal((await app.inject('/api/post/%01')).statusCode, 400)
    assert.equal((await app.inject('/api/posts')).statusCode, 200)
    await db.exec('ALTER TABLE posts RENAME TO posts_away')
    assert.equal((await app.inject('/api/post/first-post')).statusCode, 503)
    await db.exec('ALTER TABLE posts_away RENAME TO posts')

    const scrape = fromInject(await app.inject('/metrics'))
    assert.equal(scrape.status, 200)
    const samples = parseMetrics(scrape.text)
    const requests = samplesOf(samples, 'blog_read_api_http_request_duration_seconds_count', { tier: 'posts-api', method: 'GET' })
    assert.deepEqual(requests.map((s) => `${s.labels.route} ${s.labels.status} ${s.value}`).sort(), [
      '/api/post/:slug 200 1', '/api/post/:slug 304 1', '/api/post/:slug 400 1', '/api/post/:slug 404 1', '/api/post/:slug 503 1', '/api/posts 200 1'
    ])
    const reads = (kind: string): number => valueOf(samples, 'blog_read_api_store_query_duration_seconds_count', { kind })
    // A change-token read before each answer that reached the store (not the 400).
    assert.equal(reads('token'), 5)
    // The post read for the 200 and reused for the 304; the missing one; the one the outage failed.
    assert.equal(reads('post'), 3)
    // The list, and the slugs the first post's neighbour links were read from (once for the version).
    assert.equal(reads('list'), 2)
    assert.equal(reads('probe'), 0)
    const bodies = (kind: string, result: string): number => valueOf(samples, 'blog_read_api_post_bodies_total', { kind, result })
    assert.deepEqual([bodies('post', 'built'), bodies('post', 'reused'), bodies('list', 'built'), bodies('list', 'reused')], [3, 1, 1, 0])
    assert.equal(valueOf(samples, 'blog_read_api_store_errors_total', { kind: 'post', error: 'unavailable' }), 1)
    assert.deepEqual(samplesOf(samples, 'blog_read_api_store_errors_total').length, 1)
    // SQLite has one connection, no pool.
    assert.deepEqual(samplesOf(samples, 'blog_read_api_store_pool_connections'), [])
  } finally {
    await app.close()
  }
})

test('a store error that is no outage is counted as internal', async () => {
  const failing: PostStore = { ...createCountingStore([]), findPostBySlug: async () => { throw new TypeError('a defect') } }
  const app = buildPostsApp({ store: failing, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server, metrics: createProcessMetrics() })
  try {
    assert.equal((await app.inject('/api/post/first-post')).statusCode, 500)
    const samples = parseMetrics((await app.inject('/metrics')).body)
    assert.equal(valueOf(samples, 'blog_read_api_store_errors_total', { kind: 'post', error: 'internal' }), 1)
  } finally {
    await app.close()
  }
})

test('pages are timed as such; a query the table cannot answer is the client\'s 400, no store error', async () => {
  const app = buildPostsApp({ store, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server, metrics: createProcessMetrics() })
  const refusing: PostStore = { ...createCountingStore([{ slug: 'a' }]), readPage: async () => { throw new StoreQueryError('the cursor is of another kind of list') } }
  const refusingApp = buildPostsApp({ store: refusing, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server, metrics: createProcessMetrics() })
  try {
    assert.equal((await app.inject('/api/posts?limit=1')).statusCode, 200)
    assert.equal(valueOf(parseMetrics((await app.inject('/metrics')).body), 'blog_read_api_store_query_duration_seconds_count', { kind: 'page' }), 1)
    assertProblem(fromInject(await refusingApp.inject('/api/posts?limit=1')), 'invalid-query')
    const samples = parseMetrics((await refusingApp.inject('/metrics')).body)
    assert.equal(valueOf(samples, 'blog_read_api_store_query_duration_seconds_count', { kind: 'page' }), 1)
    assert.deepEqual(samplesOf(samples, 'blog_read_api_store_errors_total'), [])
  } finally {
    await app.close()
    await refusingApp.close()
  }
})
