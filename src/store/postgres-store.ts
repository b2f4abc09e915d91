// PostgreSQL (and PostgreSQL-compatible engines) through node-postgres.
import { Kysely, sql, type CompiledQuery } from 'kysely'
import pg from 'pg'
import Cursor from 'pg-cursor'
import type { PublishingOptions } from '../publishing/publishing-options.js'
import { KyselyPostStore } from './kysely-post-store.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import { isNetworkFailure } from './driver-errors.js'
import { BoundedPostgresDialect, isReusableAfter, timedQuery, withStatementTimeout, type QueryBounds } from './postgres-dialect.js'
import { bigintToJson } from './normalise-row.js'
import { streamOnOwnConnection } from './own-connection-stream.js'
import type { StoreLimits } from '../config.js'
import { answersChangeToken, CHANGE_TOKEN_QUERY, tokenOfResult } from './postgres-change-token.js'
import { isoTimestamp, isoTimestamptz, TIMESTAMPTZ_OID } from './postgres-timestamps.js'

const OID = { int8: 20, date: 1082, timestamp: 1114, timestamptz: TIMESTAMPTZ_OID } as const

/**
 * Type parsers of this pool only (the global pg.types stays untouched): timestamps become
 * ISO 8601 UTC strings (`timestamp` without zone read as UTC), dates stay `YYYY-MM-DD`,
 * int8 becomes a number when exact, else a string. json, jsonb and boolean keep pg's parsers.
 */
const typeParsers = {
  getTypeParser (oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case OID.int8: return (text: string) => bigintToJson(BigInt(text))
      case OID.date: return (text: string) => text
      case OID.timestamp: return isoTimestamp
      case OID.timestamptz: return isoTimestamptz
      default: return pg.types.getTypeParser(oid, format)
    }
  }
} as pg.CustomTypesConfig

/**
 * SQLSTATE classes of an outage: 08 connection exception, 53 insufficient resources (too many
 * connections, disk full), 57 operator intervention (57014 statement time-out, 57P01 to 57P03
 * terminated or cannot connect now), 58 system error (I/O).
 */
const OUTAGE_CLASSES = new Set(['08', '53', '57', '58'])
/**
 * And single states: the table or a column gone (42P01, 42703), the database gone (3D000) or not
 * accepting connections (55000), the credentials refused (28000, 28P01), and a read cancelled on a
 * hot standby because replay needed what it was reading (40001: our reads are never serializable
 * transactions, so this is the only way they meet it; a retry succeeds).
 */
const OUTAGE_STATES = new Set(['42P01', '42703', '3D000', '55000', '28000', '28P01', '40001'])
/**
 * A cursor's published_at that the column's type cannot read: any data exception (SQLSTATE class
 * 22: invalid text representation, datetime format or field overflow, an unknown time zone…).
 * The cursor's grammar (sort-key-values.ts) refuses such values first for the types it knows;
 * this covers a column of any other type.
 */
const isDataException = (state: string | undefined): boolean => state?.startsWith('22') === true
/**
 * node-postgres's own errors for a connection that died, none within connectionTimeoutMillis,
 * or no answer within a query's query_timeout (QueryBounds).
 */
const LOST_CONNECTION = /^(?:Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|timeout expired|Query read timeout)/

function isUnavailable (err: Error): boolean {
  if (err instanceof pg.DatabaseError) {
    const state = err.code ?? ''
    // FATAL and PANIC end the session: the server dropped or refused the connection.
    return OUTAGE_CLASSES.has(state.slice(0, 2)) || OUTAGE_STATES.has(state) || err.severity === 'FATAL' || err.severity === 'PANIC'
  }
  return isNetworkFailure(err) || LOST_CONNECTION.test(err.message)
}

/**
 * Rows per cursor read: 50 first, so that the first bytes come at once, then twice as many per
 * read up to 400, so that a long list is not 2,000 round trips (each waits its turn behind the
 * requests in flight: a 100,000-post keyed list took over 10 s under load). A few concurrent
 * streams of full posts stay within a few MB.
 */
const CURSOR_FIRST_ROWS = 50
const CURSOR_MAX_ROWS = 400

async function * cursorRows (client: pg.PoolClient, query: CompiledQuery): AsyncGenerator<Array<Record<string, unknown>>> {
  const cursor = client.query(new Cursor<Record<string, unknown>>(query.sql, [...query.parameters]))
  const lost = connectionLoss(client)
  try {
    let batch = CURSOR_FIRST_ROWS
    for (let rows = await lost.race(cursor.read(batch)); rows.length > 0; rows = await lost.race(cursor.read(batch))) {
      yield rows
      batch = Math.min(CURSOR_MAX_ROWS, batch * 2)
    }
    await lost.race(cursor.close())
  } finally {
    lost.stop()
  }
}

/**
 * pg-cursor ignores the loss of its connection once its query completed (the CommandComplete
 * came, the ReadyForQuery did not): its last read, or its close, then waits for ever, holding
 * the request, its turn of the store gate and a pooled connection (which the pool's end then
 * waits for too). Each waits for the connection's end as well, which fails it as a lost
 * connection (a 503).
 */
function connectionLoss (client: pg.PoolClient): { race: <T>(pending: Promise<T>) => Promise<T>, stop: () => void } {
  let onEnd = (): void => {}
  const lost = new Promise<never>((_resolve, reject) => {
    onEnd = () => { reject(new Error('Connection terminated unexpectedly while reading a list')) }
  })
  lost.catch(() => {})
  client.once('end', onEnd)
  return {
    race: async (pending) => await Promise.race([pending, lost]),
    stop: () => { client.removeListener('end', onEnd) }
  }
}

/**
 * The change token (postgres-change-token.ts) runs for (nearly) every request, in one round trip:
 * by default one simple-protocol string with its time-out, and no prepared statement (a
 * transaction pooler would send its next execution to a connection that never prepared it);
 * with DB_PREPARED_STATEMENTS=on, a statement each connection parses and plans once.
 */
const CHANGE_TOKEN_STATEMENT_NAME = 'blog-read-api-change-token'

async function readChangeToken (pool: pg.Pool, { statementTimeoutMs, queryTimeoutMs, sessionTimeout }: QueryBounds): Promise<string> {
  const query = sessionTimeout
    ? { ...timedQuery(CHANGE_TOKEN_QUERY, queryTimeoutMs), name: CHANGE_TOKEN_STATEMENT_NAME }
    : timedQuery(withStatementTimeout(statementTimeoutMs, CHANGE_TOKEN_QUERY), queryTimeoutMs)
  // Checked out and released here rather than through pool.query(), whose release after a query
  // that throws at once leaves its error listener armed: the connection's closing error then
  // releases it a second time, and pg-pool throws that out of an event handler.
  const client = await pool.connect()
  let reusable = true
  try {
    return tokenOfResult(await client.query(query))
  } catch (err) {
    reusable = isReusableAfter(err)
    throw err
  } finally {
    client.release(reusable ? undefined : new Error('closed in an unknown state'))
  }
}

const postgresSpec = (pool: pg.Pool, bounds: QueryBounds): DialectSpec => ({
  dialect: 'postgres',
  isUnavailable,
  poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  async describeColumns (db) {
    // to_regclass follows search_path, as the unqualified `posts` of our queries does.
    const { rows } = await sql<{ name: string, type: string }>`
      SELECT attname AS name, format_type(atttypid, NULL) AS type FROM pg_attribute
      WHERE attrelid = to_regclass('posts') AND attnum > 0 AND NOT attisdropped
      ORDER BY attnum`.execute(db)
    // The driver parses json, jsonb and boolean itself.
    return rows.map((r) => ({ name: r.name, kind: r.type === 'bytea' ? 'binary' : 'value', type: r.type }))
  },
  isInvalidKey: (err) => err instanceof pg.DatabaseError && isDataException(err.code),
  newestFirst: sql`published_at DESC NULLS LAST`,
  // As the default table's index has it (any column collation orders otherwise).
  slugKey: () => sql`slug COLLATE "C"`,
  // pg would parse a timestamptz into a Date (milliseconds) and lose its microseconds; its text
  // is exact, and a parameter compared with the column takes the column's type.
  exactKey: (column) => sql`${sql.ref(column)}::text`,
  // "C" compares the UTF-8 bytes: code point order. Only text and varchar take it as they are: a
  // bpchar ignores trailing spaces and a citext case, whatever the collation.
  codePointKey: ({ name, type }) => type === 'text' || type === 'character varying'
    ? { key: sql`${sql.ref(name)} COLLATE "C"`, exact: sql.ref(name) }
    : { key: sql`${sql.ref(name)}::text COLLATE "C"`, exact: sql`${sql.ref(name)}::text` },
  // Every write of a row (UPDATE, INSERT, a restore) gives it the writing transaction's id.
  rowStamp: sql<string>`xmin::text`,
  tagCondition ({ type = '' }) {
    // COALESCE: a NULL `tags` holds no tag, and `tag_not` negates this.
    if (type === 'jsonb') return (tag) => sql<boolean>`COALESCE(tags @> jsonb_build_array(${tag}::text), false)`
    if (type === 'json') return (tag) => sql<boolean>`COALESCE(tags::jsonb @> jsonb_build_array(${tag}::text), false)`
    if (type.endsWith('[]')) return (tag) => sql<boolean>`COALESCE(tags::text[] @> ARRAY[${tag}::text], false)`
    return undefined
  },
  // The bound is an instant; a column without a zone holds UTC (as it is served), whatever the
  // session's TimeZone, and a date is its start in UTC. Other types hold no instant.
  dateCondition ({ name, type = '' }) {
    const column = sql.ref(name)
    if (type === 'timestamp with time zone') return (op, instant) => sql<boolean>`${column} ${sql.raw(op)} ${instant}::timestamptz`
    if (type === 'timestamp without time zone') return (op, instant) => sql<boolean>`${column} ${sql.raw(op)} (${instant}::timestamptz AT TIME ZONE 'UTC')`
    if (type === 'date') return (op, instant) => sql<boolean>`${column}::timestamp ${sql.raw(op)} (${instant}::timestamptz AT TIME ZONE 'UTC')`
    return undefined
  },
  async createDefaultTable (db) {
    await sql`CREATE TABLE IF NOT EXISTS posts (
      id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      title text NOT NULL,
      summary text,
      content text NOT NULL DEFAULT '',
      author text,
      tags jsonb NOT NULL DEFAULT '[]',
      published_at timestamptz,
      updated_at timestamptz
    )`.execute(db)
    await sql`CREATE INDEX IF NOT EXISTS posts_newest_first ON posts (published_at DESC NULLS LAST, slug COLLATE "C")`.execute(db)
    await removeFormerChangeTrigger(db)
  },
  // The snapshot that makes the token sees commits to every table, so a view needs nothing installed.
  trackView: async () => await answersChangeToken(async () => await readChangeToken(pool, bounds)) ? { kind: 'built-in' } : { kind: 'none' },
  detectChangeTracking: async () => await answersChangeToken(async () => await readChangeToken(pool, bounds)),
  readChangeToken: async () => await readChangeToken(pool, bounds),
  timestampParameter: (date) => date,
  streamRows: (query) => streamOnOwnConnection({
    acquire: async () => await pool.connect(),
    // The cursor lives in a transaction of its own (a transaction pooler keeps the server
    // connection for it until COMMIT), and so does its lifted time-out: no session state.
    // Only its start is bounded here (the wait for a server connection, in a pooler's queue).
    liftStatementTimeout: async (client) => { await client.query(timedQuery('BEGIN; SET LOCAL statement_timeout = 0', bounds.queryTimeoutMs)) },
    rows: (client) => cursorRows(client, query),
    restoreStatementTimeout: async (client) => { await client.query('COMMIT') },
    release: (client, reusable) => client.release(!reusable)
  })
})

/**
 * Earlier releases kept a counter in a table of their own, bumped by a trigger on `posts` that
 * `migrate` installed; the change token needs neither (postgres-change-token.ts), so `migrate`
 * removes them where they remain, and writes stop paying for the trigger.
 */
async function removeFormerChangeTrigger (db: Kysely<Tables>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`DROP TRIGGER IF EXISTS blog_read_api_posts_changed ON posts`.execute(trx)
    await sql`DROP FUNCTION IF EXISTS blog_read_api_posts_changed()`.execute(trx)
    await sql`DROP TABLE IF EXISTS blog_read_api_changes`.execute(trx)
  })
}

export function openPostgresStore (url: string, onPoolError: (err: Error) => void, limits: StoreLimits, publishing?: PublishingOptions): KyselyPostStore {
  const pool = new pg.Pool({
    connectionString: url,
    max: limits.poolSize,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // A start-up parameter only when the connection is a session of its own (PgBouncer refuses it).
    statement_timeout: limits.preparedStatements ? limits.statementTimeoutMs : undefined,
    application_name: 'blog-read-api',
    types: typeParsers
  })
  // An idle connection that the server drops (restart, pg_terminate_backend) emits 'error' on
  // the pool; unhandled, it would crash the process. The pool replaces it on the next query.
  pool.on('error', onPoolError)
  // …but a checked-out client has no pool listener, and node-postgres emits 'error' on a client
  // whose connection dies even while its query is failing (pg_terminate_backend, a restart):
  // unhandled, that crashed the post API under load (test/store/fault-under-load.test.ts). The
  // failing query is already a logged 503, and the pool drops the dead client on release.
  pool.on('connect', (client) => { client.on('error', () => {}) })
  const bounds: QueryBounds = {
    statementTimeoutMs: limits.statementTimeoutMs,
    sessionTimeout: limits.preparedStatements,
    queryTimeoutMs: limits.connectTimeoutMs + limits.statementTimeoutMs
  }
  const dialect = new BoundedPostgresDialect(pool, bounds)
  return new KyselyPostStore(new Kysely<Tables>({ dialect }), postgresSpec(pool, bounds), publishing)
}
