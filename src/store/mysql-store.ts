// MySQL and MariaDB through mysql2.
import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool, type TypeCastField, type TypeCastNext } from 'mysql2'
import { KyselyPostStore, type DialectSpec, type Tables } from './kysely-post-store.js'
import type { ColumnInfo, StoreLimits } from './store.js'

/** MySQL/MariaDB BOOLEAN is TINYINT(1): read it as a boolean. */
function typeCast (field: TypeCastField, next: TypeCastNext): unknown {
  if (field.type === 'TINY' && field.length === 1) {
    const text = field.string()
    return text === null ? null : text !== '0'
  }
  return next()
}

const JSON_VALID_CHECK = /json_valid\(`((?:[^`]|``)+)`\)/gi

const mysqlSpec: DialectSpec = {
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
  // No change detector: MySQL's TRUNCATE bypasses triggers, so a trigger-kept counter could
  // miss a change. Every answer is read afresh (ETags and 304s still work, from the bytes).
  detectChangeTracking: async () => false,
  readChangeToken: async () => undefined
}

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
    // MariaDB bounds statements in seconds, MySQL bounds SELECTs in milliseconds.
    connection.query('SET SESSION max_statement_time = ?', [limits.statementTimeoutMs / 1000], (err) => {
      if (err !== null) connection.query('SET SESSION max_execution_time = ?', [limits.statementTimeoutMs])
    })
  })
  return new KyselyPostStore(new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) }), mysqlSpec)
}
