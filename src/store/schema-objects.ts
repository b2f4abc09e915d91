// What `migrate` finds before it writes: whether `posts` is a table, a view or absent, and the
// schema's tables, indexes and triggers, per dialect; so that it lists what it added, and on a
// view touches only the change tracking of the tables it reads. Then what it writes: the default
// table, and the search index when asked.
import { sql, type Kysely } from 'kysely'
import type { Dialect, MigrateOutcome } from './store.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { SearchSettings } from '../search/compiled-search.js'
import { createSearchIndex, presentColumns } from './store-search.js'

export type PostsObject = 'table' | 'view' | undefined

export async function describePostsObject (db: Kysely<Tables>, dialect: Dialect): Promise<PostsObject> {
  const { rows: [row] } = await (dialect === 'sqlite'
    ? sql<{ kind: string }>`SELECT type AS kind FROM sqlite_schema WHERE name = 'posts' AND type IN ('table', 'view')`
    : dialect === 'postgres'
      ? sql<{ kind: string }>`SELECT CASE WHEN relkind IN ('v', 'm') THEN 'view' ELSE 'table' END AS kind FROM pg_class WHERE oid = to_regclass('posts')`
      : sql<{ kind: string }>`SELECT CASE WHEN TABLE_TYPE = 'VIEW' THEN 'view' ELSE 'table' END AS kind FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'`).execute(db)
  return row === undefined ? undefined : row.kind === 'view' ? 'view' : 'table'
}

/** The schema's tables, indexes and triggers, as `kind name`: what `migrate` compares before and after. */
async function schemaObjects (db: Kysely<Tables>, dialect: Dialect): Promise<Set<string>> {
  const { rows } = await (dialect === 'sqlite'
    ? sql<{ entry: string }>`SELECT type || ' ' || name AS entry FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'`
    : dialect === 'postgres'
      ? sql<{ entry: string }>`SELECT CASE c.relkind WHEN 'i' THEN 'index ' ELSE 'table ' END || c.relname AS entry FROM pg_class c
          WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'i')
          UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = to_regclass('posts')`
      : sql<{ entry: string }>`SELECT CONCAT('index ', INDEX_NAME) AS entry FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'
          UNION SELECT CONCAT('table ', TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
          UNION SELECT CONCAT('trigger ', TRIGGER_NAME) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()`).execute(db)
  return new Set(rows.map((row) => row.entry))
}

/**
 * `migrate`: the default table when absent, and the search index when asked; what it adds to an
 * existing table, listed (`index posts_newest_first`…); on a view, change tracking on the tables it
 * reads, and what that added.
 */
export async function migratePosts (db: Kysely<Tables>, dialect: Dialect, spec: Pick<DialectSpec, 'createDefaultTable' | 'describeColumns' | 'trackView'>, search?: SearchSettings): Promise<MigrateOutcome> {
  const before = await describePostsObject(db, dialect)
  const had = before === undefined ? undefined : await schemaObjects(db, dialect)
  const added = async (): Promise<string[]> => [...await schemaObjects(db, dialect)].filter((entry) => had?.has(entry) === false).sort()
  // A view is the operator's: no table, index or trigger can be put on it, only on what it reads.
  if (before === 'view') {
    const tracking = await spec.trackView(db)
    return { posts: 'view', tracking, added: await added() }
  }
  await spec.createDefaultTable(db)
  // `migrate --search`: the store's search index too, over those of its columns the table has.
  if (search !== undefined) await createSearchIndex(db, dialect, presentColumns(search, (await spec.describeColumns(db)).map((c) => c.name)))
  if (had === undefined) return { posts: 'created' }
  return { posts: 'table', added: await added() }
}
