// What each engine's compiler makes of a parsed query, and what every engine agrees on: which
// columns are searched, in which language, and how much a match in each column weighs.
import type { RawBuilder, SelectQueryBuilder } from 'kysely'

export interface SearchSettings {
  /** The searched columns of `posts`, text columns, in the order the index lists them. */
  readonly columns: readonly string[]
  /** The stemming language (`english`, …), or `simple` for none, where the engine stems. */
  readonly language: string
}

export const DEFAULT_SEARCH_SETTINGS: SearchSettings = Object.freeze({
  columns: Object.freeze(['title', 'summary', 'content']),
  language: 'english'
})

/** The alias of the derived table an engine's matches are joined as (CompiledSearch.join). */
export const SEARCH_ALIAS = 'blog_read_api_search'

/**
 * A query compiled for one engine, with every value from the query bound as a parameter: the
 * matching rows of `posts`, and their relevance.
 */
export interface CompiledSearch {
  /**
   * Where the engine ranks in an index table of its own (FTS5): the matches with their rank, a
   * derived table to inner-join to `posts` as SEARCH_ALIAS, on `on`.
   */
  readonly join?: { readonly table: RawBuilder<unknown>, readonly on: RawBuilder<boolean> }
  /** True for a matching row, where the engine matches on `posts` itself. */
  readonly condition?: RawBuilder<boolean>
  /** The row's relevance (meaningful for matching rows only): larger is more relevant. */
  readonly rank: RawBuilder<number>
}

/**
 * `query` (a select from `posts`) narrowed to the matching rows. Select `posts.*` rather than `*`
 * from it: a joined engine adds its own columns.
 */
export function whereSearchMatches<Query extends SelectQueryBuilder<any, any, any>> (query: Query, search: CompiledSearch): Query {
  let narrowed = query as SelectQueryBuilder<any, any, any>
  const { join, condition } = search
  if (join !== undefined) narrowed = narrowed.innerJoin(join.table.as(SEARCH_ALIAS), (on) => on.on(join.on))
  if (condition !== undefined) narrowed = narrowed.where(condition)
  return narrowed as Query
}

/**
 * How much a match weighs, by the column's role: a title match ranks above a summary match,
 * which ranks above a match in any other column (the body).
 */
export type ColumnRole = 'title' | 'summary' | 'body'

export function columnRole (column: string): ColumnRole {
  return column === 'title' || column === 'summary' ? column : 'body'
}

/**
 * A language name as SQL may hold it literally (a PostgreSQL text search configuration, optionally
 * schema-qualified): it comes from the settings, never from a request, and is checked anyway.
 */
const LANGUAGE = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$/
/** A column name every engine takes (quoted where SQL names it). */
const COLUMN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

export function checkSearchSettings (settings: SearchSettings): SearchSettings {
  if (!LANGUAGE.test(settings.language)) throw new Error(`search language ${JSON.stringify(settings.language)} is not a configuration name`)
  if (settings.columns.length === 0) throw new Error('search needs at least one column')
  const invalid = settings.columns.find((column) => !COLUMN.test(column))
  if (invalid !== undefined) throw new Error(`search column ${JSON.stringify(invalid)} is not a column name`)
  if (new Set(settings.columns).size !== settings.columns.length) throw new Error('search columns must be distinct')
  return settings
}
