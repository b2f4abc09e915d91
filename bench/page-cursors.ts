// The `page` scenario's cursors: one after every post of a dataset, computed from the store
// itself, since a cursor carries published_at exactly as the store holds it (SQLite: the stored
// text; PostgreSQL: the timestamptz as text, microseconds and all).
import Database from 'better-sqlite3'
import pg from 'pg'
import { encodeCursor, type SortKey } from '../src/contract/cursor.js'

/** Cursors in list order: the i-th starts the page after the i-th post. */
export async function pageCursors (store: 'sqlite' | 'postgres', databaseUrl: string): Promise<string[]> {
  return (store === 'sqlite' ? sqliteKeys(databaseUrl) : await postgresKeys(databaseUrl)).map(encodeCursor)
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
