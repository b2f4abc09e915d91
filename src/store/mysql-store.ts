// MySQL and MariaDB through mysql2.
import type { Readable } from 'node:stream'
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool, type Connection, type Pool, type PoolConnection, type TypeCastField, type TypeCastNext } from 'mysql2'
import { isNetworkFailure } from './driver-errors.js'
import type { PublishingOptions } from '../publishing/publishing-options.js'
import { KyselyPostStore } from './kysely-post-store.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import { streamOnOwnConnection } from './own-connection-stream.js'
import type { StoreLimits } from '../config.js'
import type { ColumnInfo, PoolStats } from './store.js'

/** Column types holding bytes, never served. */
const BINARY_TYPES = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob'])

/** MySQL/MariaDB BOOLEAN is TINYINT(1): read it as a boolean. */
function typeCast (field: TypeCastField, next: TypeCastNext): unknown {
  if (field.type === 'TINY' && field.length === 1) {
    const text = field.string()
    return text === null ? null : text !== '0'
  }
  return next()
}

const JSON_VALID_CHECK = /json_valid\(`((?:[^`]|``)+)`\)/gi

/** Rows buffered per streamed list. */
const STREAM_HIGH_WATER_ROWS = 200

/**
 * `rows`, failing when `connection` is lost. mysql2 tells the connection, not the stream of the
 * query it was running, that it was lost (a server restart, a KILL): the stream would wait for
 * its next row forever.
 */
function endedWithConnection (connection: PoolConnection, rows: Readable): Readable {
  const lost = (err: Error): void => { rows.destroy(err) }
  connection.once('error', lost)
  rows.once('close', () => { connection.off('error', lost) })
  return rows
}

/**
 * A row stream's rows, each batch what it holds when one arrives (a batch never waits for a row),
 * up to STREAM_HIGH_WATER_ROWS: each read() lets the driver push what its last socket read
 * brought, thousands of short rows at once.
 */
async function * bufferedBatches (rows: Readable): AsyncGenerator<Array<Record<string, unknown>>> {
  for await (const row of rows) {
    const batch = [row as Record<string, unknown>]
    for (let next: unknown; batch.length < STREAM_HIGH_WATER_ROWS && (next = rows.read()) !== null;) batch.push(next as Record<string, unknown>)
    yield batch
  }
}

/**
 * Server errors of an outage: too many connections (1040, 1203), shutting down (1053), the table,
 * a column or the database gone (1146, 1054, 1049), access refused (1044, 1045), a statement
 * time-out (MariaDB 1969, MySQL 3024), a lock wait time-out (1205), a killed query or connection
 * (1317, 1927), an idle connection closed by the server (4031).
 */
const OUTAGE_ERRNOS = new Set([1040, 1203, 1053, 1146, 1054, 1049, 1044, 1045, 1969, 3024, 1205, 1317, 1927, 4031])

function isUnavailable (err: Error): boolean {
  // mysql2 marks fatal the errors that broke the connection: lost, refused, timed out, handshake failed.
  if ((err as { fatal?: unknown }).fatal === true) return true
  const errno = (err as { errno?: unknown }).errno
  if (typeof errno === 'number' && OUTAGE_ERRNOS.has(errno)) return true
  // The pool's wait queue is full (QUEUE_LIMIT).
  return isNetworkFailure(err) || err.message === 'Queue limit reached.'
}

/** MariaDB bounds statements in seconds, MySQL bounds SELECTs in milliseconds; 0 lifts either. */
async function setStatementTimeout (connection: Connection, ms: number): Promise<void> {
  await new Promise<void>((resolve) => {
    connection.query('SET SESSION max_statement_time = ?', [ms / 1000], (err) => {
      if (err === null) resolve()
      else connection.query('SET SESSION max_execution_time = ?', [ms], () => resolve())
    })
  })
}

/**
 * mysql2 publishes no pool counts: these are its pool's own queues (lib/base/pool.js), read
 * defensively, so that a release that renames them loses the gauges rather than breaking.
 */
interface PoolInternals {
  _allConnections?: { length?: unknown }
  _freeConnections?: { length?: unknown }
  _connectionQueue?: { length?: unknown }
}

function poolStats (pool: Pool): PoolStats | undefined {
  const { _allConnections: all, _freeConnections: free, _connectionQueue: queue } = pool as unknown as PoolInternals
  const [total, idle, waiting] = [all?.length, free?.length, queue?.length]
  if (typeof total !== 'number' || typeof idle !== 'number' || typeof waiting !== 'number') return undefined
  return { total, idle, waiting }
}

const mysqlSpec = (pool: Pool, statementTimeoutMs: number): DialectSpec => ({
  dialect: 'mysql',
  // Each column length-prefixed (or `n` for NULL), so that no two rows' values give one text.
  rowVersion: (columns) => sql<string>`MD5(CONCAT(${sql.join(columns.map(({ name }) =>
    sql`COALESCE(CONCAT(LENGTH(${sql.ref(name)}), ':', ${sql.ref(name)}), 'n')`), sql`, `)}))`,
  isUnavailable,
  poolStats: () => poolStats(pool),
  async describeColumns (db) {
    const { rows } = await sql<{ name: string, type: string, collation: string | null }>`
      SELECT COLUMN_NAME AS name, DATA_TYPE AS type, COLLATION_NAME AS collation FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'
      ORDER BY ORDINAL_POSITION`.execute(db)
    if (rows.length === 0) return []
    // MySQL's JSON type arrives parsed; MariaDB's JSON is LONGTEXT with a json_valid() check,
    // which only the table definition shows.
    const { rows: [definition] } = await sql<{ 'Create Table': string }>`SHOW CREATE TABLE posts`.execute(db)
    const jsonColumns = new Set([...(definition?.['Create Table'] ?? '').matchAll(JSON_VALID_CHECK)].map((m) => m[1]?.replaceAll('``', '`')))
    const kindOf = (r: { name: string, type: string }): ColumnInfo['kind'] => jsonColumns.has(r.name) ? 'json' : BINARY_TYPES.has(r.type.toLowerCase()) ? 'binary' : 'value'
    return rows.map((r): ColumnInfo => ({ name: r.name, kind: kindOf(r), type: r.type.toLowerCase(), collation: r.collation }))
  },
  // A DATETIME compared with text that is no date is a warning, not an error: nothing to map.
  isInvalidKey: () => false,
  // MySQL sorts NULL lowest, so DESC already puts unpublished posts last.
  newestFirst: sql`published_at DESC`,
  // A binary collation (the default table's utf8mb4_bin) or a binary string already orders by
  // bytes, and only the bare column lets the (published_at, slug) index give the order; any
  // other collation needs the cast (and a sort).
  slugKey: ({ collation }) => collation == null || collation.endsWith('_bin') ? sql`slug` : sql`CAST(slug AS BINARY)`,
  // mysql2 would round a DATETIME(6) to milliseconds; the text is exact, and MySQL reads it back
  // as the column's type when comparing.
  exactKey: (column) => sql`CAST(${sql.ref(column)} AS CHAR)`,
  // Even utf8mb4_bin ignores trailing spaces (PAD SPACE); a binary string compares every byte, and
  // UTF-8 bytes compare as code points do. A text parameter compared with it is compared as bytes.
  codePointKey: ({ name }) => ({ key: sql`CAST(CONVERT(${sql.ref(name)} USING utf8mb4) AS BINARY)`, exact: sql`CONVERT(${sql.ref(name)} USING utf8mb4)` }),
  // MariaDB's JSON is text with a check, and any text column may be asked: only a JSON array holds
  // tags (JSON_CONTAINS would fail on text that is not JSON, and find "x" in a bare "x").
  // COALESCE: what holds no array is NULL here, and `tag_not` negates this. The tag as bytes:
  // MariaDB takes two conditions that differ only in a text literal's case for one (under the
  // connection's case-insensitive collation), so tag_all=SQL,sql found a post holding only `SQL`.
  tagCondition: () => (tag) => sql<boolean>`COALESCE(JSON_CONTAINS(CASE WHEN JSON_VALID(tags) THEN
    CASE WHEN JSON_TYPE(tags) = 'ARRAY' THEN tags END END, JSON_QUOTE(CONVERT(${Buffer.from(tag)} USING utf8mb4))), 0) = 1`,
  // The session's time_zone is UTC, as DATETIME is read; the bound keeps its microseconds.
  dateCondition ({ name, type = '' }) {
    if (!['datetime', 'timestamp', 'date'].includes(type)) return undefined
    return (op, instant) => sql<boolean>`${sql.ref(name)} ${sql.raw(op)} CAST(${instant.replace('T', ' ').replace('Z', '')} AS DATETIME(6))`
  },
  async createDefaultTable (db) {
    await sql`CREATE TABLE IF NOT EXISTS posts (
      id INT AUTO_INCREMENT PRIMARY KEY,
      slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL UNIQUE,
      title VARCHAR(500) NOT NULL,
      summary TEXT,
      content MEDIUMTEXT NOT NULL,
      author VARCHAR(200),
      tags JSON,
      published_at DATETIME(3),
      updated_at DATETIME(3),
      INDEX posts_newest_first (published_at DESC, slug)
    ) CHARACTER SET utf8mb4`.execute(db)
  },
  timestampParameter: (date) => date,
  streamRows: (query) => streamOnOwnConnection<PoolConnection>({
    acquire: async () => await new Promise((resolve, reject) => {
      pool.getConnection((err, connection) => { if (err === null) resolve(connection); else reject(err) })
    }),
    // MariaDB's max_statement_time and MySQL's max_execution_time would cut a long list short.
    liftStatementTimeout: async (connection) => { await setStatementTimeout(connection, 0) },
    rows: (connection) => bufferedBatches(endedWithConnection(connection, connection.query(query.sql, [...query.parameters]).stream({ highWaterMark: STREAM_HIGH_WATER_ROWS }))),
    restoreStatementTimeout: async (connection) => { await setStatementTimeout(connection, statementTimeoutMs) },
    release: (connection, reusable) => { if (reusable) connection.release(); else connection.destroy() }
  }),
  // No change detector: MySQL's TRUNCATE bypasses triggers, so a trigger-kept counter could
  // miss a change. Every answer is read afresh (ETags and 304s still work, from the bytes).
  trackView: async () => ({ kind: 'none' }),
  detectChangeTracking: async () => false,
  readChangeToken: async () => undefined
})

/** Requests that may wait for a connection; beyond it they fail at once (then 503). */
const QUEUE_LIMIT = 100

export function openMysqlStore (url: string, limits: StoreLimits, publishing?: PublishingOptions): KyselyPostStore {
  const pool = createPool({
    uri: url,
    connectionLimit: limits.poolSize,
    connectTimeout: limits.connectTimeoutMs,
    queueLimit: QUEUE_LIMIT,
    waitForConnections: true,
    enableKeepAlive: true,
    charset: 'utf8mb4',
    // DATETIME has no zone: read (and write) it as UTC, and make TIMESTAMP arrive in UTC too.
    timezone: 'Z',
    dateStrings: ['DATE'],
    supportBigNumbers: true,
    bigNumberStrings: false,
    typeCast
  })
  pool.on('connection', (connection) => {
    connection.query("SET time_zone = '+00:00'")
    setStatementTimeout(connection, limits.statementTimeoutMs).catch(() => {})
  })
  return new KyselyPostStore(new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) }), mysqlSpec(pool, limits.statementTimeoutMs), publishing)
}
