// The row versions sync compares (PostStore.readRowVersions): computed by the store where it can
// (PostgreSQL's own `xmin`, a digest of the columns on MySQL/MariaDB and, through a function
// registered on the connection, on SQLite: a query of slugs and short texts, no row bodies), else
// (a view or an engine that answers none of these) a digest of each row as served
// (src/sync/row-version.ts), which reads every row. A versioned read
// (PostStore.streamVersionedPosts) gets each post's version from the same row, the same way.
import type { AliasedRawBuilder, Kysely, RawBuilder } from 'kysely'
import { rowVersion } from '../sync/row-version.js'
import type { RowVersions } from '../sync/state-token.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { ColumnInfo, Post, VersionedPost } from './store.js'

/** The column a versioned read selects its row version as. */
const VERSION_COLUMN = 'blog_read_api_row_version'

/** How a read of posts gets each one's version: what it selects, and the version of a row read. */
export interface VersionedRead {
  /** The columns to read: `fields`, or every one where the version is a digest of the whole row. */
  fields: readonly string[] | undefined
  /** Selected besides the columns (the store's own version), or undefined. */
  column: AliasedRawBuilder<string, typeof VERSION_COLUMN> | undefined
  /** The post of `row` (normalised by `normalise`) and its version. */
  of: (row: Record<string, unknown>, normalise: (row: Record<string, unknown>) => Post) => VersionedPost
}

export interface RowVersionReader {
  read: () => Promise<RowVersions>
  /** `store`: computed by the store; `digest`: each row read and hashed here. */
  readonly kind: 'store' | 'digest'
  /** How a read of `fields` gets each post's version from the row it reads. */
  versioned: (fields: readonly string[] | undefined) => VersionedRead
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
    const column = own.as(VERSION_COLUMN)
    return {
      kind: 'store',
      read: async () => {
        const visible = source.visible()
        const posts = visible === undefined ? db.selectFrom('posts') : db.selectFrom('posts').where(visible)
        const rows = await source.read(() => posts.select(['slug', own.as('row_version')]).execute())
        return new Map(rows.map((row) => [row.slug, String(row.row_version)]))
      },
      versioned: (fields) => ({
        fields,
        column,
        of (row, normalise) {
          const version = String(row[VERSION_COLUMN])
          delete row[VERSION_COLUMN]
          return { post: normalise(row), version }
        }
      })
    }
  }
  return {
    kind: 'digest',
    read: async () => {
      const versions = new Map<string, string>()
      for await (const posts of source.streamPosts()) for (const post of posts) versions.set(post.slug, rowVersion(post))
      return versions
    },
    // The digest is of the whole row as served: read it whole, then keep `fields` (in table order).
    versioned: (fields) => ({
      fields: undefined,
      column: undefined,
      of (row, normalise) {
        const post = normalise(row)
        const version = rowVersion(post)
        if (fields !== undefined) for (const name of Object.keys(post)) if (!fields.includes(name)) delete post[name]
        return { post, version }
      }
    })
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
  read: async () => { throw new Error('readRowVersions before checkSchema') },
  versioned: () => { throw new Error('a versioned read before checkSchema') }
}
