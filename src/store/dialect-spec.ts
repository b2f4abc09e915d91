// What differs between the stores, for the Kysely reads every dialect shares: introspection,
// collation-proof ordering, tag and date conditions, DDL, timestamp binding, streaming.
import type { CompiledQuery, Kysely, RawBuilder } from 'kysely'
import type { DateCondition, TagCondition } from './filter-conditions.js'
import type { ColumnInfo, Dialect, PoolStats, ViewTracking } from './store.js'

/** The only table we read; its other columns are whatever the operator's table has. */
export interface Tables {
  posts: { slug: string, [column: string]: unknown }
}

export interface DialectSpec {
  readonly dialect: Dialect
  /**
   * Whether a driver error means the store is unavailable: unreachable, connection lost or
   * refused, no connection in time, a statement time-out, the table or a column gone. Anything
   * else (a defect of ours, an unexpected driver error) is not, and surfaces as a 500.
   */
  isUnavailable (err: Error): boolean
  /**
   * Whether an error of a read with a cursor means its `published_at` cannot be read as the
   * column's type (a forged cursor: 400, not 500).
   */
  isInvalidKey (err: Error): boolean
  /** Columns of `posts` in table order; empty when there is no such table. */
  describeColumns (db: Kysely<Tables>): Promise<ColumnInfo[]>
  /** `published_at` newest first, NULLs (unpublished) last, on every store. */
  readonly newestFirst: RawBuilder<unknown>
  /**
   * The slug as the list orders and the cursor compares it: by bytes whatever the column's
   * collation, and written as the (published_at, slug) index is, so that the index serves both.
   */
  slugKey (column: ColumnInfo): RawBuilder<unknown>
  /** A date column (`published_at`, `updated_at`) exactly as stored, for a cursor: as text where the driver would round it. */
  exactKey (column: string): RawBuilder<unknown>
  /**
   * A text column (`title`) as lists order it and a cursor compares with it: by Unicode code
   * points (UTF-8 bytes, as JavaScript's Buffer.compare) whatever its collation, on every store;
   * and its value as a cursor carries it.
   */
  codePointKey (column: ColumnInfo): { key: RawBuilder<unknown>, exact: RawBuilder<unknown> }
  /** The condition "the `tags` array holds the tag" (never NULL), or undefined when this column cannot hold one. */
  tagCondition (column: ColumnInfo): TagCondition | undefined
  /** The comparison of this column's instants with a bound, or undefined when its type holds none. */
  dateCondition (column: ColumnInfo): DateCondition | undefined
  /** Creates the default table, and the change tracking `readChangeToken` relies on where the store needs it. */
  createDefaultTable (db: Kysely<Tables>): Promise<void>
  /** On a `posts` view: installs the change tracking readChangeToken needs on the tables it reads, where the store needs and allows it. */
  trackView (db: Kysely<Tables>): Promise<ViewTracking>
  /** Whether the store has the change tracking readChangeToken needs; asked once, at checkSchema. */
  detectChangeTracking (db: Kysely<Tables>): Promise<boolean>
  /**
   * A digest of a row's content computed by the store, as text, over `columns` (MySQL/MariaDB,
   * SQLite): each poll then moves slugs and digests, not the rows. Used when a query selecting it
   * from `posts` succeeds; else rowStamp, else each row is read and digested here.
   */
  rowVersion?: (columns: readonly ColumnInfo[]) => RawBuilder<string>
  /**
   * A value that moves on every write of a row, even one that leaves it as it was (PostgreSQL's
   * `xmin`): says which rows to digest again (stamped-row-versions.ts). A view or a compatible
   * engine may lack it.
   */
  rowStamp?: RawBuilder<string>
  /**
   * Whether a query runs to its end in the calling thread (better-sqlite3): a read of every row's
   * version is then streamed, the event loop given back between batches, not read whole at once.
   */
  readonly synchronous?: boolean
  /** See PostStore.poolStats. */
  poolStats?: () => PoolStats | undefined
  /** See PostStore.readChangeToken; only called when detectChangeTracking said yes. */
  readChangeToken (): Promise<string | undefined>
  /**
   * Rows of `query` from a cursor, on a connection of its own (other reads go on meanwhile),
   * without the statement time-out: a long list takes as long as its slowest client. The rows
   * come in batches (never empty) of what was read at once.
   */
  streamRows (query: CompiledQuery): AsyncIterable<ReadonlyArray<Record<string, unknown>>>
  /** How this store's default table takes a timestamp parameter. */
  timestampParameter (date: Date): unknown
}
