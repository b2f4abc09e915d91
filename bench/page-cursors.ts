// The `page` scenario's cursors: one after every post of a dataset, computed from the store
// itself, since a cursor carries published_at exactly as the store holds it (SQLite: the stored
// text; PostgreSQL: the timestamptz as text, microseconds and all; MySQL/MariaDB: the DATETIME as
// text).
import Database from 'better-sqlite3'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { encodeCursor, type SortKey } from '../src/contract/cursor.js'
import type { Store } from './scenarios.js'

/** Cursors in list order: the i-th starts the page after the i-th post. */
export async function pageCursors (store: Store, databaseUrl: string): Promise<string[]> {
  const keys = store === 'sqlite' ? sqliteKeys(databaseUrl) : store === 'postgres' ? await postgresKeys(databaseUrl) : await mysqlKeys(databaseUrl)
  return keys.map(encodeCursor)
}

function sqliteKeys (filename: string): SortKey[] {
  const db = new Database(filename, { readonly: true, fileMustExist: true })
  try {
    return db.prepare('SELECT published_at AS publishedAt, slug FROM posts ORDER BY published_at DESC, slug COLLATE BINARY').all() as SortKey[]
  } finally {
    db.close()
  }
}

async function postgresKeys (url: string): Promise<SortKey[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ publishedAt: string | null, slug: string }>(
      'SELECT published_at::text AS "publishedAt", slug FROM posts ORDER BY published_at DESC NULLS LAST, slug COLLATE "C"')
    return rows
  } finally {
    await client.end()
  }
}

async function mysqlKeys (url: string): Promise<SortKey[]> {
  const connection = await createConnection({ uri: url })
  try {
    // The bench's posts all have a published_at: no NULLs to order last.
    const [rows] = await connection.query('SELECT CAST(published_at AS CHAR) AS publishedAt, slug FROM posts ORDER BY published_at DESC, CAST(slug AS BINARY)')
    return rows as SortKey[]
  } finally {
    await connection.end()
  }
}
