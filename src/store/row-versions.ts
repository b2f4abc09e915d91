// The row versions sync compares (PostStore.readRowVersions): the store's own where it keeps one
// per row (PostgreSQL's `xmin`: a query of slugs and numbers, no row bodies), else a digest of
// each row as served (src/sync/row-version.ts), which reads every row.
import type { Kysely, RawBuilder } from 'kysely'
import { rowVersion } from '../sync/row-version.js'
import type { RowVersions } from '../sync/state-token.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { Post } from './store.js'

export interface RowVersionReader {
  read: () => Promise<RowVersions>
  /** `own`: the store's own versions; `digest`: each row hashed. */
  readonly kind: 'own' | 'digest'
}

export interface RowVersionSource {
  db: Kysely<Tables>
  spec: DialectSpec
  /** The condition the public reads add now (the publishing rule); undefined: every row. */
  visible: () => RawBuilder<boolean> | undefined
  /** Every post as the list serves it (the rule applied). */
  streamPosts: () => AsyncIterable<Post>
  /** The store's read wrapper (failures classified). */
  read: <T>(query: () => Promise<T>) => Promise<T>
}

/**
 * Asked once, at checkSchema: whether `posts` answers the dialect's own row version (a view, or a
 * compatible engine, may not), else digests.
 */
export async function rowVersionReader (source: RowVersionSource): Promise<RowVersionReader> {
  const { db, spec } = source
  const own = spec.rowVersion
  if (own !== undefined && await answers(db.selectFrom('posts').select(own.as('v')).limit(0))) {
    return {
      kind: 'own',
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
      for await (const post of source.streamPosts()) versions.set(post.slug, rowVersion(post))
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
