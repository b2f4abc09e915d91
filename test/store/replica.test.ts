// The post API on a hot-standby replica (pg_basebackup -R, a second server on another port):
// read-only, plain SELECTs plus the change token (the replay position). Writes go to the primary; answers are as
// fresh as the replica's replay, so a write shows once replayed, within a bound.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { StoreUnavailableError, type PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, postgresServer, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { replicaSkip, startReplica, type Replica } from '../helpers/replica.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'
import { migrateDefaultTable } from './postgres-cases.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const skip = postgresServer.skip !== false ? postgresServer.skip : await replicaSkip(process.env.TEST_POSTGRES_URL)

/** How long a write on the primary may take to show through the replica (measured: well under a second). */
const FRESH_WITHIN_MS = 10_000
/** Replay cancels a query in its way after this (PostgreSQL's default is 30 s). */
const MAX_STANDBY_DELAY_MS = 100

describeOrSkip('PostgreSQL on a hot-standby replica', { skip, timeout: 120_000 }, () => {
  let replica: Replica
  let db: TestDatabase
  let replicaUrl: string
  let store: PostStore
  let tiers: Tiers

  before(async () => {
    replica = await startReplica(process.env.TEST_POSTGRES_URL ?? '', { maxStandbyDelayMs: MAX_STANDBY_DELAY_MS })
    db = await postgresServer.create()
    await migrateDefaultTable(db)
    await db.exec("INSERT INTO posts (slug, title, published_at) VALUES ('first-post', 'First', '2024-01-01T00:00:00Z')")
    await replica.caughtUp()
    replicaUrl = replica.through(db.location.dialect === 'postgres' ? db.location.url : '')
    store = await openTestStore({ dialect: 'postgres', url: replicaUrl }, { config: testConfig({ DB_STATEMENT_TIMEOUT_MS: '10000' }) })
    await store.checkSchema()
    tiers = await startTiers(store)
  })

  after(async () => {
    await tiers?.close()
    await replica?.stop()
    await db?.drop()
  })

  test('the service reads the replica: the list, a post, a 404, and change tracking', async () => {
    const standby = new pg.Client({ connectionString: replicaUrl })
    await standby.connect()
    try {
      assert.equal((await standby.query('SELECT pg_is_in_recovery() AS standby')).rows[0]?.standby, true)
      await assert.rejects(standby.query("INSERT INTO posts (slug, title) VALUES ('x', 'x')"), { code: '25006' }) // read-only
    } finally {
      await standby.end()
    }
    assert.equal(store.tracksChanges, true)
    assert.deepEqual(((await get(tiers.front.url, '/api/blog')).json() as Array<{ slug: string }>).map((p) => p.slug), ['first-post'])
    assert.equal(((await get(tiers.front.url, '/api/blog/first-post')).json() as { title: string }).title, 'First')
    assertProblem(await get(tiers.front.url, '/api/blog/no-such-post'), 'post-not-found')
  })

  test('a write on the primary shows through the replica, with a new ETag, within a bound', async (t) => {
    const before = await get(tiers.front.url, '/api/blog/first-post')
    assert.equal(before.status, 200)
    await db.exec("UPDATE posts SET title = 'Edited on the primary' WHERE slug = 'first-post'")
    await db.exec("INSERT INTO posts (slug, title, published_at) VALUES ('second-post', 'Second', '2024-02-01T00:00:00Z')")
    const wroteAt = Date.now()
    const edited = await pollUntil('the write showing through the replica', async () => {
      const post = await get(tiers.front.url, '/api/blog/first-post')
      return (post.json() as { title: string }).title === 'Edited on the primary' && post
    }, { withinMs: FRESH_WITHIN_MS })
    t.diagnostic(`the write showed through the replica after ${Date.now() - wroteAt} ms`)
    assert.notEqual(edited.headers.etag, before.headers.etag)
    // Replay applies each transaction whole: the other write is there too.
    await replica.caughtUp()
    assert.deepEqual(((await get(tiers.front.url, '/api/blog')).json() as Array<{ slug: string }>).map((p) => p.slug), ['second-post', 'first-post'])
  })

  test('the version is the replay position; a write that bypasses triggers shows in the next answer of both tiers once replayed', async () => {
    assert.match(String((await get(tiers.posts.url, '/api/post/first-post')).headers['posts-version']), /^r[0-9A-F]+-[0-9A-F]+$/)
    for (const base of [tiers.front.url, tiers.front.url]) assert.equal((await get(base, '/api/blog/first-post')).status, 200)
    await db.exec("SET session_replication_role = replica; UPDATE posts SET title = 'Restored' WHERE slug = 'first-post'; SET session_replication_role = origin")
    await replica.caughtUp()
    assert.equal(((await get(tiers.posts.url, '/api/post/first-post')).json() as { title: string }).title, 'Restored')
    assert.equal(((await get(tiers.front.url, '/api/blog/first-post')).json() as { title: string }).title, 'Restored')
  })

  test('a read cancelled by a conflict with replay (40001) is a store outage (503), and the next one succeeds', async () => {
    // A slow `posts` (so that a read is running when the conflict comes), and a row to vacuum away.
    await db.exec("ALTER TABLE posts RENAME TO posts_table; CREATE VIEW posts AS SELECT p.* FROM posts_table p, pg_sleep(3); INSERT INTO posts_table (slug, title) VALUES ('doomed', 'Doomed')")
    try {
      await replica.caughtUp()
      const read = store.findPostBySlug('first-post')
      await waitForSleepingRead(replicaUrl)
      // Removing a row the running read's snapshot may still see: replay cancels that read.
      await db.exec("DELETE FROM posts_table WHERE slug = 'doomed'")
      await db.exec('VACUUM posts_table')
      await assert.rejects(read, (err: unknown) => err instanceof StoreUnavailableError && err.cause instanceof pg.DatabaseError && err.cause.code === '40001')
    } finally {
      await db.exec('DROP VIEW posts; ALTER TABLE posts_table RENAME TO posts')
    }
    await replica.caughtUp()
    assert.equal((await get(tiers.posts.url, '/api/post/first-post')).status, 200)
  })
})

/** Until a read of the service on the replica is inside pg_sleep. */
async function waitForSleepingRead (url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await pollUntil('a read of the service inside pg_sleep', async () =>
      (await client.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'blog-read-api' AND wait_event = 'PgSleep'")).rowCount !== 0)
  } finally {
    await client.end()
  }
}
