// The PostgreSQL store suite a second time, through PgBouncer in transaction pooling mode with
// its default settings (default_pool_size = 2): every transaction may land on another server
// connection, so nothing may rely on session state, start-up parameters or prepared statements.
import assert from 'node:assert/strict'
import { after, test, type TestContext } from 'node:test'
import pg from 'pg'
import type { SettingName } from '../../src/config.js'
import { StoreUnavailableError } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, postgresServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startLoad, tally } from '../helpers/load.js'
import { pgbouncerSkip, startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'
import { describePostgresLoss, migrateDefaultTable, POSTGRES_FAULTS, POSTGRES_FIXTURE } from './postgres-cases.js'
import { describePostgresWritePaths } from './postgres-write-paths.js'
import { describeStoreContract } from './store-contract.js'
import { describeStoreErrors } from './store-errors.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const skip = postgresServer.skip !== false ? postgresServer.skip : pgbouncerSkip

let started: Promise<Pgbouncer> | undefined
after(async () => { await (await started)?.stop() })

/** One PgBouncer for the whole file, started by the first suite that needs it. */
async function bouncerStarted (): Promise<Pgbouncer> {
  started ??= startPgbouncer(process.env.TEST_POSTGRES_URL ?? '')
  return await started
}

/** Each suite's fresh database on the PostgreSQL server, which the service reaches through PgBouncer. */
const throughPgbouncer: TestServer = {
  skip,
  create: async () => {
    const bouncer = await bouncerStarted()
    const db = await postgresServer.create()
    if (db.location.dialect !== 'postgres') throw new Error('expected a PostgreSQL database')
    return { ...db, location: { dialect: 'postgres', url: bouncer.through(db.location.url) } }
  }
}

describeStoreContract('PostgreSQL through PgBouncer', throughPgbouncer, POSTGRES_FIXTURE)

// While the database refuses logins, a query on a connection the service already has waits in
// PgBouncer's queue, until the service's own bound (DB_CONNECT_TIMEOUT_MS + DB_STATEMENT_TIMEOUT_MS)
// ends it: kept below the front's budget (2 s in these tests), as docs/operations.md advises, that is
// a 503, not the front's 504. And after a failed login PgBouncer waits
// server_login_retry (15 s by default) before it tries again: so long may 503s last.
describePostgresLoss('PostgreSQL through PgBouncer', throughPgbouncer, {
  recoverWithinMs: 20_000,
  settings: { DB_CONNECT_TIMEOUT_MS: '400', DB_STATEMENT_TIMEOUT_MS: '800' }
})

describeStoreErrors('PostgreSQL through PgBouncer', throughPgbouncer, POSTGRES_FAULTS)

describePostgresWritePaths('PostgreSQL through PgBouncer', throughPgbouncer)

describeOrSkip('PostgreSQL through PgBouncer, its pool shared', { skip }, () => {
  async function serveCounter (t: TestContext, settings: Partial<Record<SettingName, string>> = {}): Promise<{ db: TestDatabase, tiers: Tiers }> {
    const db = await throughPgbouncer.create()
    t.after(async () => { await db.drop() })
    await migrateDefaultTable(db)
    await db.exec("INSERT INTO posts (slug, title, published_at) VALUES ('counter', '0', now())")
    const store = await openTestStore(db.location, { config: testConfig(settings) })
    await store.checkSchema()
    const tiers = await startTiers(store)
    t.after(async () => { await tiers.close() })
    return { db, tiers }
  }

  test('under concurrent load and writes, more service connections than server connections: only 200s, none older than its request', { timeout: 30_000 }, async (t) => {
    const bouncer = await bouncerStarted()
    const { db, tiers } = await serveCounter(t)
    const load = startLoad(tiers.front.url, ['/api/blog', '/api/blog/counter', '/api/blog/missing-post'], { connections: 16 })
    let committed = 0
    // Per reader, the last commit made before a request of its own that it has checked: the writer
    // commits again once both have checked an answer to the last commit. It goes on, past 40
    // commits, until the load has had 100 answers and PgBouncer showed more service connections
    // than its two server connections (at most 1,000 commits), whatever the machine's speed.
    // Lists of six tags no one asked for, read at once, make sure of those connections: each is a
    // store read of its own, and the pool keeps what it opened for them (idle for 30 s). A load
    // answered from held copies alone may never need a third. A writer still running after
    // the test timed out would hold the shared pool through the tests after it: it stops then.
    const checkedAfter = [0, 0]
    const progress = { writing: true, readersDone: false }
    let clients = 0
    try {
      const burst = await Promise.all(Array.from({ length: 6 }, async (_, i) => await get(tiers.posts.url, `/api/posts?tag=burst-${i}`)))
      assert.ok(burst.every((response) => response.status === 200), burst.map((response) => response.status).join(', '))
      const writer = (async () => {
        for (let i = 1; i <= 1000 && !progress.readersDone && !t.signal.aborted && (i <= 40 || clients <= 2 || load.answers.length <= 100); i++) {
          await db.exec(`UPDATE posts SET title = '${i}' WHERE slug = 'counter'`)
          committed = i
          const pools = await bouncer.admin('SHOW POOLS')
          const pool = pools.find((p) => p.database === db.name)
          clients = Math.max(clients, Number(pool?.cl_active ?? 0) + Number(pool?.cl_waiting ?? 0))
          await pollUntil(`both readers checked an answer after commit ${i}`, () => progress.readersDone || checkedAfter.every((floor) => floor >= i), { everyMs: 1 })
        }
      })().finally(() => { progress.writing = false })
      const reader = async (index: number, base: string, path: string): Promise<number> => {
        let checked = 0
        while (progress.writing && !t.signal.aborted) {
          const floor = committed
          const response = await get(base, path)
          assert.equal(response.status, 200, response.text)
          const title = (response.json() as { title: string }).title
          assert.ok(Number(title) >= floor, `${path} answered title ${title} after commit ${floor}`)
          checkedAfter[index] = floor
          checked++
        }
        return checked
      }
      const counts = await Promise.all([reader(0, tiers.front.url, '/api/blog/counter'), reader(1, tiers.posts.url, '/api/post/counter')])
        .finally(() => { progress.readersDone = true }) // one failed: the writer stops too
        .finally(async () => { await writer })
      assert.ok(counts.every((n) => n >= 40), `each reader checked each commit: ${counts.join(', ')}`)
    } finally {
      await load.stop()
    }
    const summary = JSON.stringify(tally(load.answers))
    t.diagnostic(`${load.answers.length} answers under load: ${summary}; up to ${clients} service connections on PgBouncer`)
    assert.deepEqual(load.errors, [], summary)
    assert.ok(load.answers.length > 100, summary)
    assert.ok(load.answers.every((a) => a.status === 200 || (a.status === 404 && a.kind === 'post-not-found')), summary)
    const servers = (await bouncer.admin('SHOW SERVERS')).filter((s) => s.database === db.name)
    assert.ok(servers.length <= 2, `${servers.length} server connections`)
    assert.ok(clients > 2, `the service's connections (${clients}) shared PgBouncer's two server connections`)
  })

  test('DB_PREPARED_STATEMENTS=on, meant for direct connections, fails at start-up: PgBouncer refuses its start-up parameter', async (t) => {
    const db = await throughPgbouncer.create()
    t.after(async () => { await db.drop() })
    await migrateDefaultTable(db)
    const store = await openTestStore(db.location, { config: testConfig({ DB_PREPARED_STATEMENTS: 'on' }) })
    t.after(async () => { await store.close() })
    await assert.rejects(store.checkSchema(), (err: unknown) => err instanceof StoreUnavailableError &&
      err.cause instanceof Error && /unsupported startup parameter: statement_timeout/.test(err.cause.message))
  })

  test("every server connection taken: 503 within the service's bound (connect + statement time-outs), then 200", async (t) => {
    const { db, tiers } = await serveCounter(t, { DB_CONNECT_TIMEOUT_MS: '300', DB_STATEMENT_TIMEOUT_MS: '300' })
    assert.equal((await get(tiers.posts.url, '/api/post/counter')).status, 200)
    // Two editors' open transactions hold PgBouncer's two server connections to this database.
    const holders = await Promise.all([0, 1].map(async () => {
      const holder = new pg.Client({ connectionString: db.location.dialect === 'postgres' ? db.location.url : '' })
      await holder.connect()
      await holder.query('BEGIN; SELECT 1')
      return holder
    }))
    try {
      const started = Date.now()
      const response = await get(tiers.posts.url, '/api/post/counter')
      const tookMs = Date.now() - started
      assertProblem(response, 'store-unavailable')
      assert.ok(tookMs >= 550 && tookMs < 5000, `answered after ${tookMs} ms`)
    } finally {
      for (const holder of holders) await holder.end()
    }
    // The connection whose query waited was closed, not reused: the next read is served.
    assert.equal((await get(tiers.posts.url, '/api/post/counter')).status, 200)
  })
})
