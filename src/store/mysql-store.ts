// MySQL and MariaDB through mysql2.
import { Kysely, MysqlDialect, sql, type CompiledQuery } from 'kysely'
import { createPool, type Connection, type Pool, type PoolConnection, type TypeCastField, type TypeCastNext } from 'mysql2'
import { KyselyPostStore, type DialectSpec, type Tables } from './kysely-post-store.js'
import type { StoreLimits } from '../config.js'
import type { ColumnInfo } from './store.js'

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
 * A list streamed on a connection of its own, with the statement time-out lifted for it: the
 * query lasts as long as the client takes to read the list (MariaDB's max_statement_time and
 * MySQL's max_execution_time would cut a long one short).
 */
async function * streamRows (pool: Pool, query: CompiledQuery, statementTimeoutMs: number): AsyncGenerator<Record<string, unknown>> {
  const connection = await new Promise<PoolConnection>((resolve, reject) => {
    pool.getConnection((err, acquired) => { if (err === null) resolve(acquired); else reject(err) })
  })
  // Only a connection that read its whole result and got its time-out back is reused: one left
  // mid-result (the client went away) or broken is destroyed.
  let reusable = false
  try {
    await setStatementTimeout(connection, 0)
    yield * connection.query(query.sql, [...query.parameters]).stream({ highWaterMark: STREAM_HIGH_WATER_ROWS }) as AsyncIterable<Record<string, unknown>>
    await setStatementTimeout(connection, statementTimeoutMs)
    reusable = true
  } finally {
    if (reusable) connection.release()
    else connection.destroy()
  }
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

const mysqlSpec = (pool: Pool, statementTimeoutMs: number): DialectSpec => ({
  dialect: 'mysql',
  async describeColumns (db) {
    const { rows } = await sql<{ name: string }>`
      SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'
      ORDER BY ORDINAL_POSITION`.execute(db)
    if (rows.length === 0) return []
    // MySQL's JSON type arrives parsed; MariaDB's JSON is LONGTEXT with a json_valid() check,
    // which only the table definition shows.
    const { rows: [definition] } = await sql<{ 'Create Table': string }>`SHOW CREATE TABLE posts`.execute(db)
    const jsonColumns = new Set([...(definition?.['Create Table'] ?? '').matchAll(JSON_VALID_CHECK)].map((m) => m[1]?.replaceAll('``', '`')))
    return rows.map((r): ColumnInfo => ({ name: r.name, kind: jsonColumns.has(r.name) ? 'json' : 'value' }))
  },
  // MySQL sorts NULL lowest, so DESC already puts unpublished posts last.
  newestFirst: sql`published_at DESC`,
  slugOrder: sql`CAST(slug AS BINARY)`,
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
  streamRows: (query) => streamRows(pool, query, statementTimeoutMs),
  // No change detector: MySQL's TRUNCATE bypasses triggers, so a trigger-kept counter could
  // miss a change. Every answer is read afresh (ETags and 304s still work, from the bytes).
  detectChangeTracking: async () => false,
  readChangeToken: async () => undefined
})

/** Requests that may wait for a connection; beyond it they fail at once (then 503). */
const QUEUE_LIMIT = 100

export function openMysqlStore (url: string, limits: StoreLimits): KyselyPostStore {
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
  return new KyselyPostStore(new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) }), mysqlSpec(pool, limits.statementTimeoutMs))
}
