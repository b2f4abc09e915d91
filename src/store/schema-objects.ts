// What `migrate` finds before it writes: whether `posts` is a table, a view or absent, and whether
// the list's index is there, per dialect; so that it says what it did, and writes nothing on a view.
import { sql, type Kysely } from 'kysely'
import type { Dialect, MigrateOutcome } from './store.js'
import type { DialectSpec, Tables } from './kysely-post-store.js'

export type PostsObject = 'table' | 'view' | undefined

/** The index every dialect's `migrate` creates for the list order. */
export const NEWEST_FIRST_INDEX = 'posts_newest_first'

export async function describePostsObject (db: Kysely<Tables>, dialect: Dialect): Promise<PostsObject> {
  const { rows: [row] } = await (dialect === 'sqlite'
    ? sql<{ kind: string }>`SELECT type AS kind FROM sqlite_schema WHERE name = 'posts' AND type IN ('table', 'view')`
    : dialect === 'postgres'
      ? sql<{ kind: string }>`SELECT CASE WHEN relkind IN ('v', 'm') THEN 'view' ELSE 'table' END AS kind FROM pg_class WHERE oid = to_regclass('posts')`
      : sql<{ kind: string }>`SELECT CASE WHEN TABLE_TYPE = 'VIEW' THEN 'view' ELSE 'table' END AS kind FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'`).execute(db)
  return row === undefined ? undefined : row.kind === 'view' ? 'view' : 'table'
}

export async function hasNewestFirstIndex (db: Kysely<Tables>, dialect: Dialect): Promise<boolean> {
  const { rows } = await (dialect === 'sqlite'
    ? sql`SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ${NEWEST_FIRST_INDEX}`
    : dialect === 'postgres'
      ? sql`SELECT 1 WHERE to_regclass(${NEWEST_FIRST_INDEX}) IS NOT NULL`
      : sql`SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts' AND INDEX_NAME = ${NEWEST_FIRST_INDEX}`).execute(db)
  return rows.length > 0
}

/** `migrate`: the default table when absent; what an existing table lacks, listed; nothing on a view. */
export async function migratePosts (db: Kysely<Tables>, dialect: Dialect, spec: Pick<DialectSpec, 'createDefaultTable' | 'detectChangeTracking'>): Promise<MigrateOutcome> {
  const before = await describePostsObject(db, dialect)
  // A view is the operator's: no table, index or trigger can be put on it.
  if (before === 'view') return { posts: 'view' }
  const had = before === undefined ? undefined : { index: await hasNewestFirstIndex(db, dialect), tracking: await spec.detectChangeTracking(db) }
  await spec.createDefaultTable(db)
  if (had === undefined) return { posts: 'created' }
  const added: string[] = []
  if (!had.index && await hasNewestFirstIndex(db, dialect)) added.push(`the ${NEWEST_FIRST_INDEX} index (published_at, slug)`)
  if (!had.tracking && await spec.detectChangeTracking(db)) added.push('change tracking (the blog_read_api_changes table and a trigger on posts)')
  return { posts: 'table', added }
}
