// Sync never writes to the user's database: a post API with webhooks configured and a front
// with a live stream follower, asked for the full state and a delta, leave the store exactly as
// they found it. On SQLite, the file's bytes (and its write-ahead log's) are the same; on
// PostgreSQL, every row of every table has the same version and place (`xmin`, `ctid`: an
// insert, update or delete moves them, even an update that changes no value) and the schema has
// the same tables, functions and triggers. (pg_stat_user_tables would say it too, but a session
// reports its counts up to a second after it wrote: a check on it passes a write it has not seen.)
// On MySQL/MariaDB, each table's checksum and InnoDB's count of its modifications are the same.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { test, type TestContext } from 'node:test'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { testConfig } from '../helpers/config.js'
import { mysqlServer, openTestStore, postgresServer, seedTestStore, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { openStreamClient } from '../helpers/sse-client.js'
import { listen, silentLogger, startFront } from '../helpers/tiers.js'

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

/** Runs what sync does against `database`: webhooks configured, a stream followed, the state and a delta read. */
async function exerciseSync (t: TestContext, database: TestDatabase): Promise<void> {
  const receiver = createServer((_req, res) => res.end())
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => receiver.close())
  const address = receiver.address()
  assert.ok(address !== null && typeof address === 'object')
  const store = await openTestStore(database.location)
  await store.checkSchema()
  const config = testConfig({ WEBHOOK_URLS: `http://127.0.0.1:${address.port}/hook`, WEBHOOK_SECRET: SECRET })
  const posts = await listen(buildPostsApp(postsAppOptions(config, { store, logger: silentLogger })))
  const front = await startFront(new URL(posts.url))
  try {
    const stream = await openStreamClient(`${front.url}/api/changes`)
    try {
      assert.equal(stream.status, 200)
      await stream.waitFor((event) => event.lastEventId !== '')
      const full = await get(front.url, '/api/changes')
      assert.equal(full.status, 200)
      const { until } = JSON.parse(full.text) as { until: string }
      const delta = await get(front.url, `/api/changes?since=${encodeURIComponent(until)}`)
      assert.equal(delta.status, 200)
      assert.deepEqual(JSON.parse(delta.text), { since: until, until, upserted: [], deleted: [] })
    } finally {
      stream.close()
    }
  } finally {
    await front.app.close()
    await posts.app.close()
    await store.close()
  }
}

// A reader of a database in WAL mode creates an empty write-ahead log when there is none: no
// page written, the same as none.
const digest = (path: string): string => {
  const bytes = existsSync(path) ? readFileSync(path) : Buffer.alloc(0)
  return bytes.length === 0 ? 'empty' : createHash('sha256').update(bytes).digest('hex')
}

test('SQLite: the database file and its write-ahead log are byte for byte as they were', { skip: sqliteServer.skip }, async (t) => {
  const database = await sqliteServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  const files = [database.name, `${database.name}-wal`]
  const before = files.map(digest)
  await exerciseSync(t, database)
  assert.deepEqual(files.map(digest), before)
})

async function postgresState (database: TestDatabase): Promise<unknown> {
  const url = (database.location as { url: string }).url
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const schema = await client.query(`SELECT 'table ' || table_name AS name, table_type FROM information_schema.tables WHERE table_schema = 'public'
      UNION ALL SELECT 'function ' || routine_name, NULL FROM information_schema.routines WHERE routine_schema = 'public'
      UNION ALL SELECT 'trigger ' || trigger_name, NULL FROM information_schema.triggers WHERE trigger_schema = 'public' ORDER BY name`)
    const rows: Record<string, string> = {}
    for (const { name, table_type: type } of schema.rows as Array<{ name: string, table_type: string | null }>) {
      if (type !== 'BASE TABLE') continue
      const table = name.slice('table '.length)
      const { rows: [versions] } = await client.query(`SELECT md5(coalesce(string_agg(xmin::text || ':' || ctid::text, ',' ORDER BY ctid), '')) AS digest FROM "${table}"`)
      rows[table] = (versions as { digest: string }).digest
    }
    return { schema: schema.rows, rows }
  } finally {
    await client.end()
  }
}

/**
 * `settle`: brings what the server does in the background after the seed to an end before the
 * state is first read, so that what changes afterwards is what sync did.
 */
function describeServer (name: string, server: TestServer, state: (database: TestDatabase) => Promise<unknown>, settle?: (database: TestDatabase) => Promise<void>): void {
  test(`${name}: no row written, no object created`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    await settle?.(database)
    const before = await state(database)
    await exerciseSync(t, database)
    assert.deepEqual(await state(database), before)
  })
}

/**
 * MySQL/MariaDB keeps no row version a read could compare: each table's checksum (any changed
 * value changes it), the modifications InnoDB counts per table as they are made (MariaDB's
 * INNODB_SYS_TABLESTATS, MySQL's INNODB_TABLESTATS), and the schema's tables, routines,
 * triggers and events.
 */
async function mysqlState (database: TestDatabase): Promise<unknown> {
  const connection = await createConnection({ uri: (database.location as { url: string }).url })
  try {
    const [schema] = await connection.query(`SELECT CONCAT('table ', TABLE_NAME) AS name, TABLE_TYPE AS type FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
      UNION ALL SELECT CONCAT('routine ', ROUTINE_NAME), NULL FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()
      UNION ALL SELECT CONCAT('trigger ', TRIGGER_NAME), NULL FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()
      UNION ALL SELECT CONCAT('event ', EVENT_NAME), NULL FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE() ORDER BY name`) as [Array<{ name: string, type: string | null }>, unknown]
    const checksums: Record<string, unknown> = {}
    for (const { name, type } of schema) {
      if (type !== 'BASE TABLE') continue
      const [[row]] = await connection.query(`CHECKSUM TABLE \`${name.slice('table '.length)}\` EXTENDED`) as [Array<{ Checksum: unknown }>, unknown]
      checksums[name] = row?.Checksum
    }
    let modified: unknown
    for (const stats of ['INNODB_SYS_TABLESTATS', 'INNODB_TABLESTATS']) {
      try {
        [modified] = await connection.query(`SELECT NAME, MODIFIED_COUNTER FROM information_schema.${stats} WHERE NAME LIKE CONCAT(DATABASE(), '/%') ORDER BY NAME`)
        break
      } catch {}
    }
    assert.ok(Array.isArray(modified) && modified.length > 0, 'InnoDB counts the modifications of the posts table')
    return { schema, checksums, modified }
  } finally {
    await connection.end()
  }
}

/**
 * InnoDB recalculates a table's statistics in the background once a tenth of its rows changed
 * (the seed changed them all), and that resets its count of modifications to 0, whenever it
 * runs: seen once between the two reads of the state. ANALYZE TABLE recalculates them now.
 */
async function mysqlSettle (database: TestDatabase): Promise<void> {
  const connection = await createConnection({ uri: (database.location as { url: string }).url })
  try {
    const [tables] = await connection.query("SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'") as [Array<{ name: string }>, unknown]
    for (const { name } of tables) await connection.query(`ANALYZE TABLE \`${name}\``)
  } finally {
    await connection.end()
  }
}

describeServer('PostgreSQL', postgresServer, postgresState)
describeServer('MySQL/MariaDB', mysqlServer, mysqlState, mysqlSettle)
