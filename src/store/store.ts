// The store boundary: what the upstream post API needs from a database, whatever its dialect.
import type { ListFilter } from '../contract/list-filter.js'
import type { ListQuery, PostQuery } from '../contract/list-query.js'
import type { SortKey } from '../contract/cursor.js'
import type { PublishingState } from '../publishing/publishing-options.js'
import type { Neighbours } from '../contract/neighbours.js'
import type { RowVersions } from '../sync/state-token.js'
import type { SearchSettings } from '../search/compiled-search.js'
import type { SearchHit } from '../search/memory-search-index.js'
import type { SearchQuery } from '../contract/search-query.js'

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** One row of `posts`, every column a property, values normalised the same way on every store (normalise-row.ts). */
export type Post = { slug: string } & Record<string, JsonValue>

export type Dialect = 'sqlite' | 'postgres' | 'mysql'

/** How the normaliser must read a column the driver hands over as text or numbers; `binary` is never served. */
export type ColumnKind = 'json' | 'boolean' | 'binary' | 'value'

export interface ColumnInfo {
  name: string
  kind: ColumnKind
  /** The declared type, lower case, where a dialect needs it to build a condition (PostgreSQL). */
  type?: string
  /** The collation, where a dialect needs it to order by bytes with the index (MySQL). */
  collation?: string | null
}

/** A post with the version of the row it was read from, read in the same statement (readRowVersions' version of that row). */
export interface VersionedPost {
  post: Post
  version: string
}

/** A list query with its page size. */
export type PageQuery = ListQuery & { readonly limit: number }

/** A post of the list and its sort key. */
export interface KeyedPost {
  key: SortKey
  post: Post
}

export interface Page {
  /** At most `limit` posts, in list order. */
  posts: Post[]
  /** The sort key of the last post, when more posts follow it. */
  next: SortKey | undefined
}

/**
 * Reads posts. Every read sees the store's current committed state.
 * Failures of the store itself (unreachable, connection lost, timed out, table or column gone)
 * reject with StoreUnavailableError, which the API answers as 503 + Retry-After; any other error
 * rejects as it is (a defect: 500).
 */
export interface PostStore {
  readonly dialect: Dialect
  /**
   * Every post of `query` (its limit aside), newest first by `published_at` when that column
   * exists, undated ones last, then by slug (bytewise), read from a cursor a batch at a time so
   * that no list is too large to serve. It comes in those batches (never empty, a few hundred
   * posts at most): each step of a stream costs a promise or more, so whoever passes a list on
   * pays that once per batch, not once per post.
   */
  streamPosts (query?: ListQuery): AsyncIterable<readonly Post[]>
  /** The same list, each post with its sort key: what a cursor after it carries. */
  streamKeyedPosts (query?: ListQuery): AsyncIterable<readonly KeyedPost[]>
  /** One page: at most `limit` posts of the list in the same order, read whole. */
  readPage (query: PageQuery): Promise<Page>
  /** How many posts `filter` keeps (one query); its `q` aside (a search counts its matches). */
  countPosts (filter: ListFilter): Promise<number>
  /**
   * The posts of `slugs` the list may show (the publishing rule applied), in that order, absent
   * ones left out; only `fields` when given. A search's page, whose order the store cannot sort by.
   */
  findPostsBySlugs? (slugs: readonly string[], query?: PostQuery): Promise<Post[]>
  /**
   * The store's own search index for `settings` (made by `migrate --search`), or undefined:
   * none, or one made for other columns or another language. Asked after checkSchema.
   */
  openSearchIndex? (settings: SearchSettings): Promise<StoreSearch | undefined>
  /**
   * Rejects at once (StoreQueryError) a query this table cannot answer: a `fields` name that is
   * not a column, a `tag` without a usable `tags` column, a cursor of another kind of list.
   * The reads check too; this lets a caller refuse before doing anything else.
   */
  checkQuery (query: ListQuery): void
  /**
   * A cheap token that changes whenever a committed write may have changed what the reads
   * return, or undefined when this store cannot tell (then every answer is read afresh).
   * Read it *before* the data it labels: data read after it is at least as new as the token.
   * Every process reading the same store state gets the same token, except where the store can
   * only tell per connection (a SQLite file `migrate` never ran on): that token names its connection.
   */
  readChangeToken (): Promise<string | undefined>
  /**
   * The publishing rule on this table: its deciding columns and the rows it hides now, whether or
   * not the reads apply it (PUBLISHED_ONLY), for the start-up log. Under PUBLISHED_ONLY every read
   * above applies the rule, and the change token names the next scheduled instant too, so it
   * moves when that instant passes (src/publishing/schedule.ts).
   */
  readPublishingState? (): Promise<PublishingState>
  /**
   * The next scheduled instant (ms since the epoch) under PUBLISHED_ONLY, read now; undefined when
   * none, or when the rule is off. For stores without change tracking, whose token cannot carry it.
   */
  readNextScheduledInstant? (): Promise<number | undefined>
  /**
   * The neighbours of the post `slug` in the default list order (undefined: the list does not hold
   * it), read with a few one-row queries: for a store without versions, which cannot keep the
   * list's slugs from one answer to the next.
   */
  readNeighbours? (slug: string): Promise<Neighbours | undefined>
  /**
   * Slug → version of every post the list serves now (the publishing rule applied): a digest of
   * the row's content, so a version moves exactly when what a client would receive for that post
   * may have, and is the same in every process. MySQL/MariaDB and SQLite compute it in the query;
   * PostgreSQL digests each row as served (src/sync/row-version.ts) again only when its `xmin`
   * moved; views and compatible engines without `xmin`, every row as served.
   */
  readRowVersions (): Promise<RowVersions>
  /**
   * As streamPosts (`fields` and `formats` only), each post with its row version read from the
   * same row: sync labels an answer with the state of the very rows it carries, never with a
   * state read before or after them (a writer may commit in between).
   */
  streamVersionedPosts (query?: PostQuery): AsyncIterable<readonly VersionedPost[]>
  /** As findPostsBySlugs, each post with its row version read from the same row. */
  findVersionedPostsBySlugs (slugs: readonly string[], query?: PostQuery): Promise<VersionedPost[]>
  /** As findPostBySlug, whatever the publishing rule says (a preview). */
  findAnyPostBySlug? (slug: string, query?: PostQuery): Promise<Post | undefined>
  /** Whether readChangeToken can answer (known after checkSchema). */
  readonly tracksChanges: boolean
  /** The pool's connections now, for the metrics; undefined where there is no pool (SQLite). */
  poolStats? (): PoolStats | undefined
  /** Resolves when `posts` answers a query now (readiness); rejects as the reads do. */
  probe (): Promise<void>
  /** The post whose slug equals `slug` exactly (case, accents and trailing spaces count); only `fields` when given. */
  findPostBySlug (slug: string, query?: PostQuery): Promise<Post | undefined>
  /**
   * Creates the default `posts` table when absent, or adds what an existing table lacks (the list's
   * index; change tracking where the store needs it); on a `posts` view, change tracking on the
   * tables it reads where the store needs and allows it. Only the `migrate` command and a fresh
   * default database call it.
   */
  migrate (options?: MigrateOptions): Promise<MigrateOutcome | void>
  /** Inserts the sample posts that are not there yet; returns how many were inserted. */
  seed (): Promise<number>
  /** Rejects with StoreSchemaError when `posts` or its `slug` column is missing. */
  checkSchema (): Promise<void>
  close (): Promise<void>

  // The import command's writes.
  /** The columns of `posts`, in table order (known after checkSchema). */
  readonly columns: readonly string[]
  /**
   * Inserts or updates posts by slug (unique within one call), in one transaction. A post whose
   * columns already hold its values is left untouched, not rewritten, so an import that changes
   * nothing moves no change token. With `dryRun`, only compares.
   */
  upsertPosts (posts: readonly PostUpsert[], options: { dryRun: boolean }): Promise<UpsertOutcome[]>
}

/** A search answered by the store's own index. */
export interface StoreSearch {
  /** The index, for the start-up log. */
  readonly name: string
  /**
   * Every post matching `query` among those `filter` (its `q` aside) and the publishing rule
   * keep, with its relevance, most relevant first, ties by slug (bytewise).
   */
  rankMatches (query: SearchQuery, filter: ListFilter): Promise<SearchHit[]>
}

export interface MigrateOptions {
  /** `migrate --search`: also create the store's search index for these settings (their columns the table has). */
  search?: SearchSettings
}

export interface PoolStats {
  /** Connections open, idle or in use. */
  total: number
  idle: number
  /** Requests waiting for a connection. */
  waiting: number
}

/** A value to store: JSON (arrays and objects are stored as JSON text), or a Date for a timestamp column. */
export type PostValue = JsonValue | Date

export interface PostUpsert {
  /** The columns to store; the post is unchanged when each of them already holds its value. */
  values: { slug: string } & Record<string, PostValue>
  /** Columns set only when the post is inserted or changed, never compared (`updated_at`: now). */
  stampOnWrite?: Record<string, PostValue>
}

export type UpsertOutcome = 'inserted' | 'updated' | 'unchanged'

/**
 * What `migrate` did: created the table, added `added` to an existing one (maybe nothing), or on a
 * view, what became of change tracking and what it added to the tables the view reads.
 */
export type MigrateOutcome = { posts: 'created' } | { posts: 'table', added: string[] } | { posts: 'view', tracking: ViewTracking, added: string[] }

/** Change tracking on a `posts` view, which no trigger can be put on. */
export type ViewTracking =
  /** On the tables the view reads (SQLite: the counter's triggers). */
  | { kind: 'installed', tables: string[] }
  /** Nothing needed: the store's own record of commits sees every write to any table (PostgreSQL). */
  | { kind: 'built-in' }
  /** None on this store, for tables or views: every answer is read afresh (MySQL/MariaDB). */
  | { kind: 'none' }
  /** Not possible for this view, and why (SQLite: it reads a virtual table); each process then keeps versions of its own. */
  | { kind: 'refused', reason: string }

export class StoreUnavailableError extends Error {
  constructor (message: string, options: { cause?: unknown } = {}) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}

/** A list query the table cannot answer (400 `invalid-query`); `message` names the parameter. */
export class StoreQueryError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'StoreQueryError'
  }
}

/** The database is reachable but is not a blog database: reported at start-up. */
export class StoreSchemaError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'StoreSchemaError'
  }
}
