// What `migrate` finds before it writes: whether `posts` is a table, a view or absent, and whether
// the list's index is there, per dialect; so that it says what it did, and writes nothing on a view.
import { sql, type Kysely } from 'kysely'
import type { Dialect } from './store.js'
import type { Tables } from './kysely-post-store.js'

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
