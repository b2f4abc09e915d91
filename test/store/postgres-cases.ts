// The PostgreSQL cases that run on every way of reaching the server: directly (postgres.test.ts)
// and through PgBouncer in transaction pooling mode (pgbouncer.test.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import type { SettingName } from '../../src/config.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { answersDuringLoss, recovers, startOverOneFreshPost } from './store-loss.js'
import type { StoreFixture } from './store-contract-suite.js'
import { LIST_PATH, POST_PATH, typeErrorFrom, type StoreFaults } from './store-errors.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

export const POSTGRES_FIXTURE: StoreFixture = {
  normalisationTable: [
    `CREATE TABLE posts (id bigint PRIMARY KEY, slug text NOT NULL UNIQUE, title text,
      published_at timestamp(3), edited_at timestamptz, day date, is_draft boolean, meta jsonb, raw_meta json,
      note text, views bigint, score numeric(5,2), rating real, cover bytea, labels text[])`,
    `INSERT INTO posts VALUES (9007199254740993, 'first-post', 'First', '2024-01-02 03:04:05.678',
      '2024-01-02 05:04:05+02', '2024-01-02', true, '{"a":[1,2],"b":null}', '[1,"x"]', NULL, 42, 12.50, 1.5,
      '\\xdeadbeef', '{x,y}')`,
    "INSERT INTO posts (id, slug, is_draft) VALUES (2, 'second-post', false)"
  ],
  expectedFirstPost: {
    id: '9007199254740993',
    slug: 'first-post',
    title: 'First',
    published_at: '2024-01-02T03:04:05.678Z', // timestamp without zone, read as UTC
    edited_at: '2024-01-02T03:04:05.000Z',
    day: '2024-01-02',
    is_draft: true,
    meta: { a: [1, 2], b: null },
    raw_meta: [1, 'x'],
    note: null,
    views: 42,
    score: '12.50',
    rating: 1.5,
    labels: ['x', 'y']
  },
  tagsColumn: { type: 'json', anyText: false },
  timestamp: (iso) => `'${iso}'`
}

/** Creates the default table, as `migrate` does. */
export async function migrateDefaultTable (db: TestDatabase): Promise<void> {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
}

/** Faults of the server itself (those of an address with no server behind it are in postgres.test.ts). */
export const POSTGRES_FAULTS: StoreFaults = {
  outages: [
    { name: 'the posts table renamed away (42P01)', cause: async (db) => { await db.exec('ALTER TABLE posts RENAME TO posts_away') } },
    { name: 'the column the list is ordered by dropped (42703)', paths: [LIST_PATH], cause: async (db) => { await db.exec('ALTER TABLE posts DROP COLUMN published_at') } },
    {
      name: 'a statement time-out (57014)',
      settings: { DB_STATEMENT_TIMEOUT_MS: '200' },
      // A list lifts the time-out for its cursor: only the post is bounded.
      paths: [POST_PATH],
      cause: async (db) => { await db.exec('ALTER TABLE posts RENAME TO posts_table; CREATE VIEW posts AS SELECT p.* FROM posts_table p, pg_sleep(5)') }
    },
    {
      name: 'connections terminated while the database refuses new ones (57P01, 55000)',
      // Through a pooler, a query waits in its queue for a server connection until the client-side
      // bound (connect + statement time-outs) ends it: short ones keep this test short.
      settings: { DB_CONNECT_TIMEOUT_MS: '500', DB_STATEMENT_TIMEOUT_MS: '500' },
      cause: async (db) => {
        await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`)
        const terminated = await db.admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'blog-read-api'`)
        assert.ok(terminated.length > 0, 'the store had a connection to terminate')
      }
    }
  ],
  defects: [
    {
      name: 'an unexpected PostgreSQL error (division by zero in a view)',
      logged: /division by zero/,
      cause: async (db) => {
        await db.exec('ALTER TABLE posts RENAME TO posts_table; CREATE VIEW posts AS SELECT p.*, 1 / (p.id - p.id) AS broken FROM posts_table p')
      }
    },
    typeErrorFrom(pg.Client.prototype, 'query')
  ]
}

export function describePostgresLoss (name: string, server: TestServer, { recoverWithinMs = 5000, settings = {} }: {
  recoverWithinMs?: number
  settings?: Partial<Record<SettingName, string>>
} = {}): void {
  describeOrSkip(`${name} store loss`, { skip: server.skip }, () => {
    test('terminated connections and a database refusing connections give 503, then recovery without restart', { timeout: recoverWithinMs + 20_000 }, async (t) => {
      const db = await server.create()
      const tiers = await startOverOneFreshPost(db, settings)
      const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'blog-read-api'`
      try {
        assert.deepEqual(await answersDuringLoss(tiers, 1), [200, 200])
        assert.ok((await db.admin(terminate)).length > 0, 'the service had connections to terminate')
        await answersDuringLoss(tiers, 5) // each 200 (reconnected) or 503, never 500

        await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`)
        await db.admin(terminate)
        const statuses = await answersDuringLoss(tiers, 3)
        assert.deepEqual(statuses, [503, 503, 503, 503, 503, 503])

        await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`)
        t.diagnostic(`200 again ${await recovers(tiers, recoverWithinMs)} ms after the database accepted connections again`)
      } finally {
        await db.admin(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`)
        await tiers.close()
        await db.drop()
      }
    })
  })
}
