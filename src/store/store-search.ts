// The store's own search index, which only `migrate --search` creates: creating it, finding it
// when the post API starts (for the columns SEARCH_COLUMNS names), and compiling a search for it.
// Without one, the post API searches an index of its own (src/search/memory-search-index.ts).
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import { whereSearchMatches, type CompiledSearch, type SearchSettings } from '../search/compiled-search.js'
import { compileMysqlSearch, createMysqlSearchIndex, MYSQL_SEARCH_INDEX, MYSQL_TITLE_INDEX, readMysqlSearchLimits } from '../search/mysql-search.js'
import { compilePostgresSearch, createPostgresSearchIndex, POSTGRES_SEARCH_COLUMN } from '../search/postgres-search.js'
import type { SearchQuery } from '../contract/search-query.js'
import { compileSqliteSearch, createSqliteSearchIndex, fts5Tokenizer, SQLITE_SEARCH_TABLE } from '../search/sqlite-search.js'
import { sortHits } from '../search/memory-search-index.js'
import { checkFilter, filterConditions, type FilterColumns } from './filter-conditions.js'
import type { Dialect, StoreSearch } from './store.js'

/** Columns the store adds for search and never serves (PostgreSQL's stored document). */
export const SEARCH_ONLY_COLUMNS: readonly string[] = [POSTGRES_SEARCH_COLUMN]

export interface StoreSearchIndex {
  /** What it is, for the start-up log. */
  readonly name: string
  compile: (query: SearchQuery) => CompiledSearch
}

/** `settings` with only the searched columns `posts` has (SEARCH_COLUMNS' default lists some a table may lack). */
export function presentColumns (settings: SearchSettings, columns: readonly string[]): SearchSettings {
  return { ...settings, columns: settings.columns.filter((column) => columns.includes(column)) }
}

/** Creates the index of `settings` (its columns present in `posts`) when absent: `migrate --search`. */
export async function createSearchIndex (db: Kysely<any>, dialect: Dialect, settings: SearchSettings): Promise<void> {
  if (settings.columns.length === 0) throw new Error('the posts table has none of the columns SEARCH_COLUMNS names')
  if (dialect === 'sqlite') await createSqliteSearchIndex(db, settings)
  else if (dialect === 'postgres') await createPostgresSearchIndex(db, settings)
  else await createMysqlSearchIndex(db, settings)
}

const sameColumns = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((column, i) => column === b[i])

/** Whether PostgreSQL's text of the document's expression is that of `settings` (its language, each column once, in order). */
function madeOf (expression: string, { columns, language }: SearchSettings): boolean {
  const named = [...expression.matchAll(/to_tsvector\('([^']+)'::regconfig, COALESCE\(("?)([^",)]+)\2,/gi)]
  return named.length === columns.length && named.every((match, i) => match[1] === language && match[3] === columns[i])
}

/**
 * The index `migrate --search` made for exactly these columns, or undefined: absent, or made for
 * other columns (an FTS5 table or a FULLTEXT index answers only for the columns it was built on).
 */
export async function findSearchIndex (db: Kysely<any>, dialect: Dialect, settings: SearchSettings): Promise<StoreSearchIndex | undefined> {
  const { columns } = settings
  if (columns.length === 0) return undefined
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${SQLITE_SEARCH_TABLE})`.execute(db)
    if (!sameColumns(rows.map((row) => row.name), columns)) return undefined
    // The table's tokenizer decides the stemming: it must be the language's.
    const { rows: [table] } = await sql<{ sql: string }>`SELECT sql FROM sqlite_schema WHERE name = ${SQLITE_SEARCH_TABLE}`.execute(db)
    if (table?.sql.includes(`tokenize='${fts5Tokenizer(settings.language)}'`) !== true) return undefined
    return { name: `the SQLite FTS5 table ${SQLITE_SEARCH_TABLE}`, compile: (query) => compileSqliteSearch(query, settings) }
  }
  if (dialect === 'postgres') {
    // The stored document's expression names the columns it was made of, as regular identifiers or quoted.
    const { rows: [row] } = await sql<{ expression: string | null }>`SELECT generation_expression AS expression FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'posts' AND column_name = ${POSTGRES_SEARCH_COLUMN}`.execute(db)
    if (row?.expression == null || !madeOf(row.expression, settings)) return undefined
    return { name: `the PostgreSQL column ${POSTGRES_SEARCH_COLUMN} and its GIN index`, compile: (query) => compilePostgresSearch(query, settings) }
  }
  const { rows } = await sql<{ name: string, column: string }>`SELECT INDEX_NAME AS name, COLUMN_NAME AS \`column\` FROM information_schema.STATISTICS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts' AND INDEX_TYPE = 'FULLTEXT' ORDER BY INDEX_NAME, SEQ_IN_INDEX`.execute(db)
  const indexed = (name: string): string[] => rows.filter((row) => row.name === name).map((row) => row.column)
  if (!sameColumns(indexed(MYSQL_SEARCH_INDEX), columns)) return undefined
  if (columns.length > 1 && columns.includes('title') && !sameColumns(indexed(MYSQL_TITLE_INDEX), ['title'])) return undefined
  const limits = await readMysqlSearchLimits(db)
  return { name: `the FULLTEXT index ${MYSQL_SEARCH_INDEX}`, compile: (query) => compileMysqlSearch(query, settings, limits) }
}

export interface SearchReads {
  db: Kysely<any>
  dialect: Dialect
  /** The columns of `posts` served. */
  columns: readonly string[]
  /** The rows the publishing rule shows now. */
  visiblePosts: () => SelectQueryBuilder<any, 'posts', {}>
  filterColumns: FilterColumns
  /** The store's read wrapper (failures classified). */
  read: <T>(query: () => Promise<T>) => Promise<T>
}

/** A search through the store's own index for `settings` (PostStore.openSearchIndex), or undefined when it has none for them. */
export async function openStoreSearch (reads: SearchReads, settings: SearchSettings): Promise<StoreSearch | undefined> {
  const index = await reads.read(() => findSearchIndex(reads.db, reads.dialect, presentColumns(settings, reads.columns)))
  if (index === undefined) return undefined
  const rankMatches: StoreSearch['rankMatches'] = async (search, filter) => {
    checkFilter(filter, reads.filterColumns)
    const query = rankedMatches(reads.visiblePosts(), index.compile(search), filterConditions(filter, reads.filterColumns))
    return sortHits((await reads.read(() => query.execute())).map((row) => ({ slug: row.slug as string, rank: Number(row.search_rank) })))
  }
  return { name: index.name, rankMatches }
}

/** The slug and relevance of every row of `posts` (a select from it) that matches `search` and meets `conditions`. */
export function rankedMatches (posts: SelectQueryBuilder<any, 'posts', {}>, search: CompiledSearch, conditions: ReadonlyArray<RawBuilder<boolean>>) {
  let query = whereSearchMatches(posts, search).select([sql<string>`posts.slug`.as('slug'), search.rank.as('search_rank')])
  for (const condition of conditions) query = query.where(condition)
  return query
}
