// The row versions sync compares (PostStore.readRowVersions): a digest of each row's content, so
// that a version moves exactly when what a client would receive may have, and every process
// computes the same version for the same row. Computed by the store where it can (MySQL/MariaDB,
// and SQLite through a function on the connection: a query of slugs and short texts, no row
// bodies, streamed on SQLite so that the event loop is given back as it goes); on PostgreSQL, a
// digest of each row as served for the rows whose `xmin` moved (stamped-row-versions.ts); else
// (a view without `xmin`) of every row as served (src/sync/row-version.ts). A versioned read (PostStore.streamVersionedPosts) gets each post's
// version from the same row, the same way.
import type { AliasedRawBuilder, Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import { rowVersion } from '../sync/row-version.js'
import type { RowVersions } from '../sync/state-token.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { RowNormaliser } from './normalise-row.js'
import { stampedRowVersions } from './stamped-row-versions.js'
import type { ColumnInfo, Post, VersionedPost } from './store.js'

/** The column a versioned read selects its row version (or stamp) as. */
export const VERSION_COLUMN = 'blog_read_api_row_version'

/** How a read of posts gets each one's version: what it selects, and the version of a row read. */
export interface VersionedRead {
  /** The columns to read: `fields`, or every one where the version is a digest of the whole row. */
  fields: readonly string[] | undefined
  /** Selected besides the columns (the store's own version, or its stamp), or undefined. */
  column: AliasedRawBuilder<string, typeof VERSION_COLUMN> | undefined
  /** The post of `row` (normalised by `normalise`) and its version. */
  of: (row: Record<string, unknown>, normalise: RowNormaliser) => VersionedPost
}

export interface RowVersionReader {
  read: () => Promise<RowVersions>
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
  /** The rows the publishing rule shows, every served column selected. */
  selectServed: () => SelectQueryBuilder<Tables, 'posts', Record<string, unknown>>
  normalise: RowNormaliser
  /** Every post as the list serves it (the rule applied). */
  streamPosts: () => AsyncIterable<readonly Post[]>
  /** The store's read wrapper (failures classified). */
  read: <T>(query: () => Promise<T>) => Promise<T>
}

/** The rows of `posts` the rule shows now, for a query of versions or stamps. */
export function visibleRows ({ db, visible }: RowVersionSource): SelectQueryBuilder<Tables, 'posts', {}> {
  const condition = visible()
  return condition === undefined ? db.selectFrom('posts') : db.selectFrom('posts').where(condition)
}

/** `post` whole, the digest of it as served, then only `fields` (in table order) kept: a digest is of the whole row. */
export function digestedPost (post: Post, fields: readonly string[] | undefined, digest = rowVersion(post)): VersionedPost {
  if (fields !== undefined) for (const name of Object.keys(post)) if (!fields.includes(name)) delete post[name]
  return { post, version: digest }
}

/**
 * Asked once, at checkSchema: whether `posts` answers the dialect's row version, or its row stamp
 * (a view, or a compatible engine, may answer neither), else digests of every row.
 */
export async function rowVersionReader (source: RowVersionSource): Promise<RowVersionReader> {
  const { db, spec } = source
  const own = spec.rowVersion?.(source.columns.filter((column) => column.kind !== 'binary'))
  if (own !== undefined && await answers(db.selectFrom('posts').select(own.as('v')).limit(0))) {
    const column = own.as(VERSION_COLUMN)
    return {
      read: async () => {
        const query = visibleRows(source).select(['slug', own.as('row_version')])
        if (spec.synchronous !== true) return new Map((await source.read(() => query.execute())).map((row) => [row.slug, String(row.row_version)]))
        return await source.read(async () => await versionsInTurns(spec.streamRows(query.compile())))
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
  const stamp = spec.rowStamp
  if (stamp !== undefined && await answers(db.selectFrom('posts').select(stamp.as('v')).limit(0))) return stampedRowVersions(source, stamp)
  return {
    read: async () => {
      const versions = new Map<string, string>()
      for await (const posts of source.streamPosts()) for (const post of posts) versions.set(post.slug, rowVersion(post))
      return versions
    },
    // The digest is of the whole row as served: read it whole.
    versioned: (fields) => ({ fields: undefined, column: undefined, of: (row, normalise) => digestedPost(normalise(row), fields) })
  }
}

/**
 * The versions of `rows` (slug, row_version), the event loop given back after each batch: digesting
 * 10,000 rows of 4 KB takes 110 to 340 ms, which read whole would hold every other request back.
 */
async function versionsInTurns (rows: AsyncIterable<ReadonlyArray<Record<string, unknown>>>): Promise<RowVersions> {
  const versions = new Map<string, string>()
  for await (const batch of rows) {
    for (const row of batch) versions.set(row.slug as string, String(row.row_version))
    await new Promise(setImmediate)
  }
  return versions
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
  read: async () => { throw new Error('readRowVersions before checkSchema') },
  versioned: () => { throw new Error('a versioned read before checkSchema') }
}
