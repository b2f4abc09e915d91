// The row versions sync compares (PostStore.readRowVersions): computed by the store where it can
// (PostgreSQL's own `xmin`, a digest of the columns on MySQL/MariaDB and, through a function
// registered on the connection, on SQLite: a query of slugs and short texts, no row bodies), else
// (a view or an engine that answers none of these) a digest of each row as served
// (src/sync/row-version.ts), which reads every row.
import type { Kysely, RawBuilder } from 'kysely'
import { rowVersion } from '../sync/row-version.js'
import type { RowVersions } from '../sync/state-token.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { ColumnInfo, Post } from './store.js'

export interface RowVersionReader {
  read: () => Promise<RowVersions>
  /** `store`: computed by the store; `digest`: each row read and hashed here. */
  readonly kind: 'store' | 'digest'
}

export interface RowVersionSource {
  db: Kysely<Tables>
  spec: DialectSpec
  /** The columns of `posts` (binary ones, never served, are left out of a version). */
  columns: readonly ColumnInfo[]
  /** The condition the public reads add now (the publishing rule); undefined: every row. */
  visible: () => RawBuilder<boolean> | undefined
  /** Every post as the list serves it (the rule applied). */
  streamPosts: () => AsyncIterable<readonly Post[]>
  /** The store's read wrapper (failures classified). */
  read: <T>(query: () => Promise<T>) => Promise<T>
}

/**
 * Asked once, at checkSchema: whether `posts` answers the dialect's row version (a view, or a
 * compatible engine, may not), else digests.
 */
export async function rowVersionReader (source: RowVersionSource): Promise<RowVersionReader> {
  const { db, spec } = source
  const own = spec.rowVersion?.(source.columns.filter((column) => column.kind !== 'binary'))
  if (own !== undefined && await answers(db.selectFrom('posts').select(own.as('v')).limit(0))) {
    return {
      kind: 'store',
      read: async () => {
        const visible = source.visible()
        const posts = visible === undefined ? db.selectFrom('posts') : db.selectFrom('posts').where(visible)
        const rows = await source.read(() => posts.select(['slug', own.as('row_version')]).execute())
        return new Map(rows.map((row) => [row.slug, String(row.row_version)]))
      }
    }
  }
  return {
    kind: 'digest',
    read: async () => {
      const versions = new Map<string, string>()
      for await (const posts of source.streamPosts()) for (const post of posts) versions.set(post.slug, rowVersion(post))
      return versions
    }
  }
}

async function answers (query: { execute: () => Promise<unknown> }): Promise<boolean> {
  try {
    await query.execute()
    return true
  } catch {
    return false
  }
}

/** Before checkSchema: nothing to read yet. */
export const NO_ROW_VERSIONS: RowVersionReader = {
  kind: 'digest',
  read: async () => { throw new Error('readRowVersions before checkSchema') }
}
