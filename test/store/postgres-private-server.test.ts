// Write paths that need server settings a shared server must not get, on a PostgreSQL server of
// the test's own (test/helpers/private-postgres.ts):
// - a write arriving through a logical-replication subscription (wal_level = logical; the server
//   subscribes to itself, from one database to another);
// - a commit whose WAL record is written while the transaction is not yet visible (a synchronous
//   standby that never answers holds it there), then made visible without writing any WAL: a
//   token taken from the WAL position would already cover it, and keep confirming the old copy.
import { after, before, test } from 'node:test'
import pg from 'pg'
import { postgresServer, type TestDatabase } from '../helpers/databases.js'
import { pollUntil } from '../helpers/poll.js'
import { privatePostgresSkip, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js'
import { assertNextTitle, hold, OPERATOR_TABLE, serve } from './postgres-write-paths.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const reference = process.env.TEST_POSTGRES_URL
const skip = postgresServer.skip !== false ? postgresServer.skip : await privatePostgresSkip(reference)

describeOrSkip('PostgreSQL: a write through a logical-replication subscription', { skip, timeout: 120_000 }, () => {
  let server: PrivatePostgres
  before(async () => { server = await startPrivatePostgres(reference ?? '', ['wal_level = logical']) })
  after(async () => { await server?.stop() })

  test('shows in the next answer of both tiers once applied, on a table migrate never ran on', async (t) => {
    // Hooks run in the order they are added: the subscription goes before the databases.
    const late: { subscriber?: TestDatabase } = {}
    t.after(async () => { await late.subscriber?.exec('DROP SUBSCRIPTION IF EXISTS blog_sub') })
    const publisher = await server.server.create()
    t.after(async () => { await publisher.drop() })
    const served = await serve(t, server.server)
    late.subscriber = served.db
    await publisher.exec(`${OPERATOR_TABLE}; CREATE PUBLICATION blog_pub FOR TABLE posts`)
    // CREATE SUBSCRIPTION would wait on itself creating the slot on the same server: the slot first.
    await publisher.exec("SELECT pg_create_logical_replication_slot('blog_sub', 'pgoutput')")
    const publisherUrl = new URL(server.url)
    publisherUrl.pathname = `/${publisher.name}`
    await served.db.exec(`TRUNCATE posts; CREATE SUBSCRIPTION blog_sub CONNECTION '${publisherUrl.href.replace('postgres://', 'postgresql://')}'
      PUBLICATION blog_pub WITH (create_slot = false, slot_name = 'blog_sub')`)
    const titleOnSubscriber = async (): Promise<string | undefined> =>
      (await served.other.query<{ title: string }>("SELECT title FROM posts WHERE slug = 'fresh'")).rows[0]?.title
    await pollUntil('the initial copy on the subscriber', async () => await titleOnSubscriber() === 'Before', { withinMs: 30_000 })
    await hold(served, 'Before')
    await publisher.exec("UPDATE posts SET title = 'After' WHERE slug = 'fresh'")
    await pollUntil('the update applied on the subscriber', async () => await titleOnSubscriber() === 'After', { withinMs: 30_000 })
    await assertNextTitle(served, 'After')
  })
})

describeOrSkip('PostgreSQL: a commit written to the WAL before it is visible', { skip, timeout: 120_000 }, () => {
  let server: PrivatePostgres
  // A commit with synchronous_commit = on waits for a synchronous standby that does not exist,
  // after its WAL record is flushed; the others (setting up, reading) commit locally.
  before(async () => { server = await startPrivatePostgres(reference ?? '', ["synchronous_standby_names = 'nobody'", 'synchronous_commit = local']) })
  after(async () => { await server?.stop() })

  test('shows in the next answer of both tiers once visible, though no WAL was written since the tiers read', async (t) => {
    // Hooks run in the order they are added: the writer leaves before its database is dropped.
    const late: { writer?: pg.Client } = {}
    t.after(async () => { await late.writer?.end() })
    const served = await serve(t, server.server)
    const writer = late.writer = new pg.Client({ connectionString: (served.db.location as { url: string }).url })
    await writer.connect()
    await writer.query('SET synchronous_commit = on')
    const pid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
    const committing = writer.query("UPDATE posts SET title = 'After' WHERE slug = 'fresh'")
    await pollUntil('the commit waiting for the synchronous standby', async () =>
      (await served.other.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = $2', [pid, 'SyncRep'])).rowCount === 1)
    // Its commit record is in the WAL; the transaction is still in progress, so the tiers read the old row.
    await hold(served, 'Before')
    const position = async (): Promise<string | undefined> => (await served.other.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]?.lsn
    const held = await position()
    // Cancelling the wait makes the local commit visible, writing nothing.
    await served.other.query('SELECT pg_cancel_backend($1)', [pid])
    await committing
    t.diagnostic(`WAL insert position when the tiers held the old row: ${held}; once the commit is visible: ${await position()}`)
    await assertNextTitle(served, 'After')
  })
})
