// What each engine's compiler makes of a parsed query, and what every engine agrees on: which
// columns are searched, in which language, and how much a match in each column weighs.
import type { RawBuilder } from 'kysely'

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

/** The language that means "no stemming" on every engine. */
export const NO_STEMMING = 'simple'

/**
 * A query compiled for one engine: conditions and expressions on a row of `posts`, with every
 * value from the query bound as a parameter.
 */
export interface CompiledSearch {
  /** True for a row that matches the query. */
  readonly condition: RawBuilder<boolean>
  /** The row's relevance (meaningful for matching rows only): larger is more relevant. */
  readonly rank: RawBuilder<number>
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
