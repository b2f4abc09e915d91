// The PostStore every dialect shares: Kysely builds the two reads; a DialectSpec supplies what
// differs (introspection, collation-proof ordering, DDL, timestamp binding).
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely'
import { createRowNormaliser, type RowNormaliser } from './normalise-row.js'
import { SAMPLE_POSTS } from './sample-posts.js'
import { StoreSchemaError, StoreUnavailableError, type ColumnInfo, type Dialect, type PoolStats, type Post, type PostStore, type PostUpsert, type UpsertOutcome } from './store.js'
import { upsertPosts } from './upsert-posts.js'

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
  /** Columns of `posts` in table order; empty when there is no such table. */
  describeColumns (db: Kysely<Tables>): Promise<ColumnInfo[]>
  /** `published_at` newest first, NULLs (unpublished) last, on every store. */
  readonly newestFirst: RawBuilder<unknown>
  /** Slug order by bytes, whatever the column's collation. */
  readonly slugOrder: RawBuilder<unknown>
  /** Creates the default table, and the change tracking `readChangeToken` relies on where the store needs it. */
  createDefaultTable (db: Kysely<Tables>): Promise<void>
  /** Whether the store has the change tracking readChangeToken needs; asked once, at checkSchema. */
  detectChangeTracking (db: Kysely<Tables>): Promise<boolean>
  /** See PostStore.poolStats. */
  poolStats?: () => PoolStats | undefined
  /** See PostStore.readChangeToken; only called when detectChangeTracking said yes. */
  readChangeToken (): Promise<string | undefined>
  /**
   * Rows of `query` from a cursor, on a connection of its own (other reads go on meanwhile),
   * without the statement time-out: a long list takes as long as its slowest client.
   */
  streamRows (query: CompiledQuery): AsyncIterable<Record<string, unknown>>
  /** How this store's default table takes a timestamp parameter. */
  timestampParameter (date: Date): unknown
}

export class KyselyPostStore implements PostStore {
  readonly dialect: Dialect
  readonly #db: Kysely<Tables>
  readonly #spec: DialectSpec
  #normalise: RowNormaliser = createRowNormaliser([])
  #hasPublishedAt = false
  #tracksChanges = false
  #columns: readonly string[] = []

  constructor (db: Kysely<Tables>, spec: DialectSpec) {
    this.#db = db
    this.#spec = spec
    this.dialect = spec.dialect
  }

  async checkSchema (): Promise<void> {
    const columns = await this.#read(() => this.#spec.describeColumns(this.#db))
    if (columns.length === 0) throw new StoreSchemaError('the database has no `posts` table (run `blog-read-api migrate` to create the default one)')
    if (!columns.some((c) => c.name === 'slug')) throw new StoreSchemaError('the `posts` table has no `slug` column')
    this.#normalise = createRowNormaliser(columns)
    this.#hasPublishedAt = columns.some((c) => c.name === 'published_at')
    this.#tracksChanges = await this.#read(() => this.#spec.detectChangeTracking(this.#db))
    this.#columns = columns.map((c) => c.name)
  }

  /** Whether readChangeToken can answer (for the start-up log). */
  get tracksChanges (): boolean {
    return this.#tracksChanges
  }

  #listQuery () {
    const query = this.#db.selectFrom('posts').selectAll()
    return (this.#hasPublishedAt ? query.orderBy(this.#spec.newestFirst) : query).orderBy(this.#spec.slugOrder)
  }

  async * streamPosts (): AsyncIterable<Post> {
    const rows = this.#spec.streamRows(this.#listQuery().compile())
    try {
      for await (const row of rows) yield this.#normalise(row)
    } catch (err) {
      throw this.#classify(err, 'failed while streaming')
    }
  }

  async readChangeToken (): Promise<string | undefined> {
    if (!this.#tracksChanges) return undefined
    return await this.#read(() => this.#spec.readChangeToken())
  }

  poolStats (): PoolStats | undefined {
    return this.#spec.poolStats?.()
  }

  async probe (): Promise<void> {
    await this.#read(() => this.#db.selectFrom('posts').select(sql.lit(1).as('one')).limit(1).execute())
  }

  async findPostBySlug (slug: string): Promise<Post | undefined> {
    const rows = await this.#read(() => this.#db.selectFrom('posts').selectAll().where('slug', '=', slug).execute())
    // Collations may match more loosely than SPEC allows (MySQL *_ci ignores case and accents,
    // PAD SPACE ignores trailing spaces): the index finds candidates, this keeps the exact one.
    const row = rows.find((r) => r.slug === slug)
    return row === undefined ? undefined : this.#normalise(row)
  }

  async migrate (): Promise<void> {
    await this.#spec.createDefaultTable(this.#db)
  }

  async seed (): Promise<number> {
    const existing = new Set((await this.#db.selectFrom('posts').select('slug').execute()).map((r) => r.slug))
    const missing = SAMPLE_POSTS.filter((p) => !existing.has(p.slug))
    if (missing.length === 0) return 0
    await this.#db.insertInto('posts').values(missing.map((p) => ({
      ...p,
      tags: JSON.stringify(p.tags),
      published_at: this.#spec.timestampParameter(p.published_at),
      updated_at: this.#spec.timestampParameter(p.updated_at)
    }))).execute()
    return missing.length
  }

  get columns (): readonly string[] {
    return this.#columns
  }

  async upsertPosts (posts: readonly PostUpsert[], { dryRun }: { dryRun: boolean }): Promise<UpsertOutcome[]> {
    return await upsertPosts({ db: this.#db, spec: this.#spec, normalise: this.#normalise }, posts, dryRun)
  }

  async close (): Promise<void> {
    await this.#db.destroy()
  }

  async #read<T> (read: () => Promise<T>): Promise<T> {
    try {
      return await read()
    } catch (err) {
      throw this.#classify(err, 'failed to answer')
    }
  }

  /** A store outage becomes StoreUnavailableError (503); anything else propagates unchanged (500). */
  #classify (err: unknown, what: string): unknown {
    if (err instanceof StoreUnavailableError || !(err instanceof Error) || !this.#spec.isUnavailable(err)) return err
    return new StoreUnavailableError(`the ${this.dialect} store ${what}`, { cause: err })
  }
}
