// A table with every deciding column of the publishing rule, per dialect, its rows written as an
// editor would (SQL on the editor's own connection), and both tiers over it with one injected
// clock: the store's rule, the post API's and the front's `Cache-Control` read the same time.
import type { TestDatabase } from '../helpers/databases.js'
import { openTestStore } from '../helpers/databases.js'
import type { Dialect } from '../../src/store/store.js'
import { startTiers, type RunningApp, type TierOptions } from '../helpers/tiers.js'
import type { PostStore } from '../../src/store/store.js'

export interface Row {
  slug: string
  draft?: boolean | null
  published?: boolean | null
  status?: string | null
  deletedAt?: number | null
  /** ms since the epoch, or null. */
  publishedAt: number | null
  /** A binary column's value (hex), or null. */
  cover?: string | null
  /** The `tags` column's JSON array (absent: NULL). */
  tags?: readonly string[]
}

/** The rule as the public sees it: the reference every answer is checked against. */
export function isPublic (row: Row, nowMs: number): boolean {
  return row.publishedAt !== null && row.publishedAt <= nowMs && row.draft !== true && row.published !== false &&
    (row.status ?? '').toLowerCase() === 'published' && (row.deletedAt ?? null) === null
}

const TABLES: Record<Dialect, string> = {
  sqlite: `CREATE TABLE posts (slug TEXT NOT NULL PRIMARY KEY, title TEXT, draft BOOLEAN, published BOOLEAN,
    status TEXT, deleted_at TEXT, published_at TEXT, cover BLOB, tags JSON)`,
  postgres: `CREATE TABLE posts (slug text NOT NULL PRIMARY KEY, title text, draft boolean, published boolean,
    status text, deleted_at timestamptz, published_at timestamptz, cover bytea, tags jsonb)`,
  mysql: `CREATE TABLE posts (slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, title VARCHAR(200),
    draft BOOLEAN, published BOOLEAN, status VARCHAR(40), deleted_at DATETIME(3), published_at DATETIME(3), cover BLOB, tags JSON)`
}

function literal (dialect: Dialect, value: boolean | number | string | null | undefined, kind: 'bool' | 'time' | 'text' | 'bytes'): string {
  if (value === null || value === undefined) return 'NULL'
  switch (kind) {
    case 'bool': return dialect === 'sqlite' ? (value === true ? '1' : '0') : (value === true ? 'TRUE' : 'FALSE')
    case 'time': {
      const iso = new Date(value as number).toISOString()
      return dialect === 'mysql' ? `'${iso.slice(0, 23).replace('T', ' ')}'` : `'${iso}'`
    }
    case 'text': return `'${String(value).replaceAll("'", "''")}'`
    case 'bytes': return dialect === 'postgres' ? `'\\x${String(value)}'::bytea` : `X'${String(value)}'`
  }
}

export function insertRows (dialect: Dialect, rows: readonly Row[]): string {
  const values = rows.map((row) => `(${[
    literal(dialect, row.slug, 'text'), literal(dialect, row.slug, 'text'), literal(dialect, row.draft, 'bool'),
    literal(dialect, row.published, 'bool'), literal(dialect, row.status, 'text'), literal(dialect, row.deletedAt, 'time'),
    literal(dialect, row.publishedAt, 'time'), literal(dialect, row.cover, 'bytes'), literal(dialect, row.tags === undefined ? null : JSON.stringify(row.tags), 'text')
  ].join(', ')})`)
  return `INSERT INTO posts (slug, title, draft, published, status, deleted_at, published_at, cover, tags) VALUES ${values.join(', ')}`
}

/** Creates the table with `rows`, and the change tracking `migrate` installs on an existing table. */
export async function createTable (database: TestDatabase, rows: readonly Row[]): Promise<void> {
  const { dialect } = database.location
  await database.exec(TABLES[dialect])
  if (rows.length > 0) await database.exec(insertRows(dialect, rows))
  const writer = await openTestStore(database.location, { writable: true })
  try {
    await writer.migrate()
  } finally {
    await writer.close()
  }
}

export interface Clock {
  now: () => number
  set: (ms: number) => void
}

export function createClock (start: number): Clock {
  let at = start
  return { now: () => at, set: (ms) => { at = ms } }
}

export interface PublishingTiers {
  store: PostStore
  posts: RunningApp
  front: RunningApp
  close: () => Promise<void>
}

/**
 * Both tiers over `database`, the store opened as `posts-api` opens it, every part on `clock`;
 * `settings` over the defaults of both (SITE_URL for the feeds), `beforeListen` sees each app first.
 */
export async function startPublishingTiers (database: TestDatabase, { publishedOnly, clock, cacheControl = 'no-cache', previewSecret, settings = {}, beforeListen }: {
  publishedOnly: boolean
  clock: Clock
  cacheControl?: string
  previewSecret?: string
  settings?: Record<string, string>
  beforeListen?: TierOptions['beforeListen']
}): Promise<PublishingTiers> {
  const store = await openTestStore(database.location, { publishing: { publishedOnly, now: clock.now } })
  await store.checkSchema()
  const all = { ...settings, CACHE_CONTROL: cacheControl, ...(previewSecret === undefined ? {} : { PREVIEW_SECRET: previewSecret }) }
  return { store, ...await startTiers(store, { settings: all, now: clock.now, beforeListen }) }
}
