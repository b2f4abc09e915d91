import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PoolConnection } from 'mysql2'
import { StoreUnavailableError } from '../../src/store/store.js'
import { mysqlServer, openTestStore } from '../helpers/databases.js'
import { freePort } from '../helpers/fake-upstream.js'
import { answersDuringLoss, recovers, startOverOneFreshPost } from './store-loss.js'
import { describeStoreContract } from './store-contract.js'
import { describeStoreErrors, LIST_PATH, POST_PATH, silentServer, typeErrorFrom } from './store-errors.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

describeStoreContract('MySQL/MariaDB', mysqlServer, {
  normalisationTable: [
    // Default (case- and accent-insensitive) collation on purpose: the exact match must still hold.
    `CREATE TABLE posts (id BIGINT UNSIGNED PRIMARY KEY, slug VARCHAR(200) NOT NULL UNIQUE, title VARCHAR(100),
      published_at DATETIME(3), edited_at TIMESTAMP NULL, day DATE, is_draft BOOLEAN, meta JSON, note TEXT,
      views BIGINT, score DECIMAL(5,2), rating DOUBLE, cover BLOB) CHARACTER SET utf8mb4`,
    `INSERT INTO posts VALUES (9007199254740993, 'first-post', 'First', '2024-01-02 03:04:05.678',
      '2024-01-02 03:04:05', '2024-01-02', TRUE, '{"a":[1,2],"b":null}', NULL, 42, 12.50, 1.5, X'DEADBEEF')`,
    "INSERT INTO posts (id, slug, is_draft) VALUES (2, 'second-post', FALSE)"
  ],
  expectedFirstPost: {
    id: '9007199254740993',
    slug: 'first-post',
    title: 'First',
    published_at: '2024-01-02T03:04:05.678Z', // DATETIME has no zone: read as UTC
    edited_at: '2024-01-02T03:04:05.000Z',
    day: '2024-01-02',
    is_draft: true,
    meta: { a: [1, 2], b: null },
    note: null,
    views: 42,
    score: '12.50',
    rating: 1.5
  },
  tagsColumn: { type: 'TEXT', anyText: true },
  timestamp: (iso) => `'${new Date(iso).toISOString().slice(0, 23).replace('T', ' ')}'`
})

describeOrSkip('MySQL/MariaDB store loss', { skip: mysqlServer.skip }, () => {
  test('killed connections give 503 or a reconnection, never 500, then recovery without restart', async () => {
    const db = await mysqlServer.create()
    const tiers = await startOverOneFreshPost(db)
    try {
      assert.deepEqual(await answersDuringLoss(tiers, 1), [200, 200])
      const sessions = await db.admin(`SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = '${db.name}' AND INFO IS NULL`) as Array<{ id: number }>
      // The editor's session is among them: killing it too is harmless, it is not used again.
      for (const { id } of sessions) await db.admin(`KILL ${id}`).catch(() => {})
      await answersDuringLoss(tiers, 5)
      await recovers(tiers)
    } finally {
      await tiers.close()
      await db.drop().catch(() => {})
    }
  })
})

describeOrSkip('MySQL/MariaDB streams', { skip: mysqlServer.skip }, () => {
  test('a list whose connection is killed mid-way fails as an outage instead of waiting forever, and the next list is whole', { timeout: 30_000 }, async (t) => {
    const db = await mysqlServer.create()
    t.after(async () => { await db.drop() })
    const writer = await openTestStore(db.location, { writable: true })
    await writer.migrate()
    await writer.close()
    // More than the server has sent when the first batch arrives: the query is still running.
    for (let from = 0; from < 20_000; from += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => `('p-${from + i}', 'T', '${'x'.repeat(300)}')`)
      await db.exec(`INSERT INTO posts (slug, title, content) VALUES ${rows.join(', ')}`)
    }
    const store = await openTestStore(db.location)
    t.after(async () => { await store.close() })
    await store.checkSchema()
    const stream = store.streamPosts()[Symbol.asyncIterator]()
    assert.equal((await stream.next()).done, false)
    const running = await db.admin(`SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = '${db.name}' AND INFO LIKE 'select%'`) as Array<{ id: number }>
    assert.equal(running.length, 1)
    await db.admin(`KILL ${running[0]?.id ?? 0}`)
    await assert.rejects(async () => { while ((await stream.next()).done !== true); }, StoreUnavailableError)
    let posts = 0
    for await (const batch of store.streamPosts()) posts += batch.length
    assert.equal(posts, 20_000)
  })
})

describeStoreErrors('MySQL/MariaDB', mysqlServer, {
  outages: [
    { name: 'the posts table renamed away (1146)', cause: async (db) => { await db.exec('RENAME TABLE posts TO posts_away') } },
    { name: 'the column the list is ordered by dropped (1054)', paths: [LIST_PATH], cause: async (db) => { await db.exec('ALTER TABLE posts DROP COLUMN published_at') } },
    {
      name: 'a statement time-out (MariaDB 1969, MySQL 3024)',
      settings: { DB_STATEMENT_TIMEOUT_MS: '200' },
      // A list lifts the time-out for its stream: only the post is bounded.
      paths: [POST_PATH],
      cause: async (db) => { await db.exec('RENAME TABLE posts TO posts_table; CREATE VIEW posts AS SELECT p.*, SLEEP(5) AS pause FROM posts_table p') }
    },
    { name: 'connection refused', location: async () => ({ dialect: 'mysql', url: `mysql://root@127.0.0.1:${await freePort()}/blog` }), cause: async () => {} },
    {
      name: 'no connection within DB_CONNECT_TIMEOUT_MS',
      settings: { DB_CONNECT_TIMEOUT_MS: '200' },
      location: async (t) => ({ dialect: 'mysql', url: `mysql://root@127.0.0.1:${await silentServer(t)}/blog` }),
      cause: async () => {}
    }
  ],
  defects: [
    {
      name: 'an unexpected MySQL error (a subquery of two rows in a view)',
      logged: /more than 1 row/,
      cause: async (db) => {
        await db.exec('RENAME TABLE posts TO posts_table; CREATE VIEW posts AS SELECT p.*, (SELECT 1 UNION SELECT 2) AS broken FROM posts_table p')
      }
    },
    // Our reads only: the pool's own session set-up must keep working.
    typeErrorFrom(PoolConnection.prototype, 'query', ([sql]) => typeof sql === 'string' && /^select/i.test(sql))
  ]
})
