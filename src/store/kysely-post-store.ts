// The PostStore every dialect shares: Kysely builds the reads; a DialectSpec (dialect-spec.ts) supplies what
// differs (introspection, collation-proof ordering, tag conditions, DDL, timestamp binding).
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { ListFilter } from '../contract/list-filter.js'
import { QUERY_DETAILS, type ListQuery, type PostQuery } from '../contract/list-query.js'
import type { SortKey } from '../contract/cursor.js'
import { sortOrder, type SortColumn } from '../contract/list-sort.js'
import type { Neighbours } from '../contract/neighbours.js'
import { createRowNormaliser, type RowNormaliser } from './normalise-row.js'
import { seedSamplePosts } from './seed-posts.js'
import { sortValueCheck } from './sort-key-values.js'
import { listOrder, SORT_KEY, sortKeyOf, withoutSortKey, type ListOrder, type OrderColumn, type OrderParts } from './list-order.js'
import { checkFilter, filterConditions, type DateCondition, type FilterColumns } from './filter-conditions.js'
import {
  StoreQueryError, StoreSchemaError, StoreUnavailableError,
  type ColumnInfo, type Dialect, type KeyedPost, type MigrateOptions, type MigrateOutcome, type Page, type PageQuery, type PoolStats, type Post, type PostStore, type PostUpsert,
  type StoreSearch, type UpsertOutcome, type VersionedPost
} from './store.js'
import { openStoreSearch, SEARCH_ONLY_COLUMNS } from './store-search.js'
import { rowsOfSlugs } from './rows-of-slugs.js'
import type { SearchSettings } from '../search/compiled-search.js'
import { upsertPosts } from './upsert-posts.js'
import { migratePosts } from './schema-objects.js'
import type { PublishingOptions, PublishingState } from '../publishing/publishing-options.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import { createPublishingReads, NO_PUBLISHING_READS, type PublishingReads } from './publishing-reads.js'
import { NO_ROW_VERSIONS, rowVersionReader, type RowVersionReader, type VersionedRead } from './row-versions.js'

export class KyselyPostStore implements PostStore {
  readonly dialect: Dialect
  readonly #db: Kysely<Tables>
  readonly #spec: DialectSpec
  #normalise: RowNormaliser = createRowNormaliser([])
  #order: OrderParts
  #slugKey: RawBuilder<unknown>
  #filterColumns: FilterColumns = { tags: undefined, published_at: undefined, updated_at: undefined }
  #tracksChanges = false
  #columns: readonly string[] = []
  /** Whether `posts` has columns never served (SEARCH_ONLY_COLUMNS): then no read selects `*`. */
  #hidesColumns = false
  readonly #publishing: PublishingOptions
  #published: PublishingReads = NO_PUBLISHING_READS
  #rowVersions: RowVersionReader = NO_ROW_VERSIONS

  constructor (db: Kysely<Tables>, spec: DialectSpec, publishing: PublishingOptions = { publishedOnly: false }) {
    this.#db = db
    this.#spec = spec
    this.#publishing = publishing
    this.dialect = spec.dialect
    this.#slugKey = spec.slugKey({ name: 'slug', kind: 'value' })
    this.#order = { columns: new Map(), slug: this.#slugKey, newestFirst: spec.newestFirst }
  }

  async checkSchema (): Promise<void> {
    const described = await this.#read(() => this.#spec.describeColumns(this.#db))
    const columns = described.filter((c) => !SEARCH_ONLY_COLUMNS.includes(c.name))
    this.#hidesColumns = columns.length !== described.length
    if (columns.length === 0) throw new StoreSchemaError('the database has no `posts` table (run `blog-read-api migrate` to create the default one)')
    if (!columns.some((c) => c.name === 'slug')) throw new StoreSchemaError('the `posts` table has no `slug` column')
    this.#normalise = createRowNormaliser(columns)
    this.#slugKey = this.#spec.slugKey(columns.find((c) => c.name === 'slug') as ColumnInfo)
    const column = (name: string): ColumnInfo | undefined => columns.find((c) => c.name === name)
    const sortable = new Map<SortColumn, OrderColumn>()
    for (const name of ['published_at', 'updated_at'] as const) {
      const info = column(name)
      if (info !== undefined) sortable.set(name, { key: sql.ref(name), exact: this.#spec.exactKey(name), isValue: sortValueCheck(this.dialect, info) })
    }
    const title = column('title')
    // Compared as the text the code point key reads it as.
    if (title !== undefined) sortable.set('title', { ...this.#spec.codePointKey(title), isValue: sortValueCheck(this.dialect, { ...title, type: 'text' }) })
    this.#order = { columns: sortable, slug: this.#slugKey, newestFirst: this.#spec.newestFirst }
    const tags = column('tags')
    const dates = (name: string): DateCondition | undefined => {
      const info = column(name)
      return info === undefined ? undefined : this.#spec.dateCondition(info)
    }
    this.#filterColumns = {
      tags: tags === undefined ? undefined : this.#spec.tagCondition(tags),
      published_at: dates('published_at'),
      updated_at: dates('updated_at')
    }
    this.#tracksChanges = await this.#read(() => this.#spec.detectChangeTracking(this.#db))
    this.#columns = columns.map((c) => c.name)
    this.#published = createPublishingReads({ db: this.#db, dialect: this.dialect, columns, publishing: this.#publishing, read: async (query) => await this.#read(query) })
    const served = { selectServed: () => this.#select(undefined), normalise: this.#normalise, streamPosts: () => this.streamPosts() }
    this.#rowVersions = await rowVersionReader({ db: this.#db, spec: this.#spec, columns, visible: () => this.#published.condition(), ...served, read: async (query) => await this.#read(query) })
  }

  readNextScheduledInstant = async (): Promise<number | undefined> => await this.#published.readNextScheduledInstant()
  readPublishingState = async (): Promise<PublishingState> => await this.#published.readState()
  readRowVersions: RowVersionReader['read'] = async () => await this.#rowVersions.read()

  /** Whether readChangeToken can answer (for the start-up log). */
  get tracksChanges (): boolean {
    return this.#tracksChanges
  }

  checkQuery (query: ListQuery): void {
    const { fields, after } = query
    const unknown = fields?.find((name) => !this.#columns.includes(name))
    if (unknown !== undefined) throw new StoreQueryError(`The fields parameter names ${unknown}, which is not a column of the posts table.`)
    checkFilter(query, this.#filterColumns)
    const order = this.#orderOf(query)
    // A cursor is client input: of this order, and holding a value this column could have given;
    // a search's in its relevance order (its rank) is resumed by the post API.
    if (after !== undefined && after.rank === undefined && !order.accepts(after)) throw new StoreQueryError(QUERY_DETAILS.after)
  }

  /** The query's order (list-order.ts); a sort by a column the table lacks is the client's mistake. */
  #orderOf ({ sort }: ListQuery): ListOrder {
    const order = listOrder(sort, this.#order)
    if (order === undefined) throw new StoreQueryError(`The sort parameter names ${sortOrder(sort ?? 'slug').column}, which is not a column of the posts table.`)
    return order
  }

  /** One range of the list, in list order (or `orderBy`); `sortKeys`: with each row's exact sort value too (pages). */
  #listQuery (list: ListQuery, order: ListOrder, range: RawBuilder<boolean> | undefined, sortKeys: boolean, orderBy = order.orderBy, version?: VersionedRead) {
    let query = this.#select(version === undefined ? list.fields : version.fields, true, version)
    if (sortKeys && order.exact !== undefined) query = query.select(order.exact.as(SORT_KEY))
    for (const condition of filterConditions(list, this.#filterColumns)) query = query.where(condition)
    if (range !== undefined) query = query.where(range)
    for (const term of orderBy) query = query.orderBy(term)
    return query
  }

  /** The neighbours of `slug` in the default list order, by keyset reads of one row each: no read of the whole list. */
  async readNeighbours (slug: string): Promise<Neighbours | undefined> {
    const order = this.#orderOf({})
    const slugs: ListQuery = { fields: ['slug'] }
    const own = (await this.#read(() => this.#listQuery(slugs, order, sql<boolean>`slug = ${slug}`, true).execute())).find((row) => row.slug === slug)
    if (own === undefined) return undefined
    const key = sortKeyOf(order, own)
    const nearest = async (reads: Array<{ range: RawBuilder<boolean> | undefined, orderBy: ReadonlyArray<RawBuilder<unknown>> }>): Promise<string | undefined> => {
      for (const { range, orderBy } of reads) {
        const [row] = await this.#read(() => this.#listQuery(slugs, order, range, false, orderBy).limit(1).execute())
        if (row !== undefined) return row.slug as string
      }
      return undefined
    }
    const prev = await nearest(order.before(key))
    const next = await nearest(order.ranges(key).map((range) => ({ range, orderBy: order.orderBy })))
    return { ...(prev === undefined ? {} : { prev }), ...(next === undefined ? {} : { next }) }
  }

  /** Every column, or those of `fields` in table order, whatever their order there: the same columns give the same bytes; and the row's version when `version` selects one. */
  #select (fields: readonly string[] | undefined, applyRule = true, version?: VersionedRead) {
    const posts = applyRule ? this.#visiblePosts() : this.#db.selectFrom('posts')
    const columns = fields === undefined && !this.#hidesColumns ? posts.selectAll() : posts.select(this.#columns.filter((name) => fields === undefined || fields.includes(name)))
    return version?.column === undefined ? columns : columns.select(version.column)
  }

  /** The rows of `posts` the publishing rule shows. */
  #visiblePosts () {
    const visible = this.#published.condition()
    return visible === undefined ? this.#db.selectFrom('posts') : this.#db.selectFrom('posts').where(visible)
  }

  async * streamPosts (query: ListQuery = {}): AsyncIterable<Post[]> {
    for await (const rows of this.#streamRows(query, false)) yield rows.map((row) => this.#normalise(row))
  }

  async * streamKeyedPosts (query: ListQuery = {}): AsyncIterable<KeyedPost[]> {
    const order = this.#orderOf(query)
    for await (const rows of this.#streamRows(query, true)) {
      yield rows.map((row) => ({ key: sortKeyOf(order, row), post: this.#normalise(withoutSortKey(row)) }))
    }
  }

  async * streamVersionedPosts (query: PostQuery = {}): AsyncIterable<VersionedPost[]> {
    const version = this.#rowVersions.versioned(query.fields)
    for await (const rows of this.#streamRows(query, false, version)) yield rows.map((row) => version.of(row, this.#normalise))
  }

  async * #streamRows (query: ListQuery, sortKeys: boolean, version?: VersionedRead): AsyncIterable<ReadonlyArray<Record<string, unknown>>> {
    this.checkQuery(query)
    const order = this.#orderOf(query)
    try {
      for (const range of order.ranges(query.after)) {
        yield * this.#spec.streamRows(this.#listQuery(query, order, range, sortKeys, order.orderBy, version).compile())
      }
    } catch (err) {
      throw this.#classify(err, 'failed while streaming', query.after)
    }
  }

  async readPage (query: PageQuery): Promise<Page> {
    this.checkQuery(query)
    const order = this.#orderOf(query)
    const rows: Array<Record<string, unknown>> = []
    // One more than the page: whether more follow.
    for (const range of order.ranges(query.after)) {
      const limit = query.limit + 1 - rows.length
      rows.push(...await this.#read(() => this.#listQuery(query, order, range, true).limit(limit).execute(), query.after))
      if (rows.length > query.limit) break
    }
    const posts = rows.slice(0, query.limit)
    const last = posts.at(-1)
    const next = rows.length > query.limit && last !== undefined ? sortKeyOf(order, last) : undefined
    return { posts: posts.map((row) => this.#normalise(withoutSortKey(row))), next }
  }

  async findPostsBySlugs (slugs: readonly string[], query: PostQuery = {}): Promise<Post[]> {
    this.checkQuery(query)
    const rows = await rowsOfSlugs(slugs, async (batch) => await this.#read(() => this.#select(query.fields).where('slug', 'in', batch).execute()))
    return rows.map((row) => this.#normalise(row))
  }

  async findVersionedPostsBySlugs (slugs: readonly string[], query: PostQuery = {}): Promise<VersionedPost[]> {
    this.checkQuery(query)
    const version = this.#rowVersions.versioned(query.fields)
    const rows = await rowsOfSlugs(slugs, async (batch) => await this.#read(() => this.#select(version.fields, true, version).where('slug', 'in', batch).execute()))
    return rows.map((row) => version.of(row, this.#normalise))
  }

  async openSearchIndex (settings: SearchSettings): Promise<StoreSearch | undefined> {
    const reads = { db: this.#db, dialect: this.dialect, columns: this.#columns, visiblePosts: () => this.#visiblePosts(), filterColumns: this.#filterColumns }
    return await openStoreSearch({ ...reads, read: async (query) => await this.#read(query) }, settings)
  }

  async countPosts (filter: ListFilter): Promise<number> {
    checkFilter(filter, this.#filterColumns)
    // The publishing rule as the list applies it: a count never counts a post the list hides.
    let query = this.#visiblePosts().select(sql<unknown>`COUNT(*)`.as('n'))
    for (const condition of filterConditions(filter, this.#filterColumns)) query = query.where(condition)
    const rows = await this.#read(() => query.execute())
    return Number(rows[0]?.n ?? 0)
  }

  async readChangeToken (): Promise<string | undefined> {
    if (!this.#tracksChanges) return undefined
    const token = await this.#read(() => this.#spec.readChangeToken())
    return token === undefined ? token : await this.#published.label(token)
  }

  poolStats (): PoolStats | undefined {
    return this.#spec.poolStats?.()
  }

  async probe (): Promise<void> {
    await this.#read(() => this.#db.selectFrom('posts').select(sql.lit(1).as('one')).limit(1).execute())
  }

  async findPostBySlug (slug: string, query: PostQuery = {}, applyRule = true): Promise<Post | undefined> {
    this.checkQuery(query)
    const rows = await this.#read(() => this.#select(query.fields, applyRule).where('slug', '=', slug).execute())
    // Collations may match more loosely than an exact slug match allows (MySQL *_ci ignores case and accents,
    // PAD SPACE ignores trailing spaces): the index finds candidates, this keeps the exact one.
    const row = rows.find((r) => r.slug === slug)
    return row === undefined ? undefined : this.#normalise(row)
  }

  /** The post whatever the publishing rule says: a preview's read, never cached. */
  async findAnyPostBySlug (slug: string, query: PostQuery = {}): Promise<Post | undefined> {
    return await this.findPostBySlug(slug, query, false)
  }

  async migrate ({ search }: MigrateOptions = {}): Promise<MigrateOutcome> {
    return await migratePosts(this.#db, this.dialect, this.#spec, search)
  }

  async seed (): Promise<number> {
    return await seedSamplePosts(this.#db, this.#spec)
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

  async #read<T> (read: () => Promise<T>, after?: SortKey): Promise<T> {
    try {
      return await read()
    } catch (err) {
      throw this.#classify(err, 'failed to answer', after)
    }
  }

  /**
   * A store outage becomes StoreUnavailableError (503); a cursor the column cannot compare with,
   * StoreQueryError (400); anything else propagates unchanged (500).
   */
  #classify (err: unknown, what: string, after: SortKey | undefined): unknown {
    if (err instanceof StoreUnavailableError || err instanceof StoreQueryError || !(err instanceof Error)) return err
    if (this.#spec.isUnavailable(err)) return new StoreUnavailableError(`the ${this.dialect} store ${what}`, { cause: err })
    if (after !== undefined && this.#spec.isInvalidKey(err)) return new StoreQueryError(QUERY_DETAILS.after)
    return err
  }
}
