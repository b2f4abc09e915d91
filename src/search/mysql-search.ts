// MariaDB / MySQL FULLTEXT (InnoDB) in boolean mode: the query string is ours, made of the words'
// letters, digits and underscores and the operators we write (+ - ( ) and double quotes around a
// phrase), bound as a parameter. No stemming: MariaDB has none; words match as they are (case
// and accents folded by the column's collation).
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { checkSearchSettings, type CompiledSearch, type SearchSettings } from './compiled-search.js'
import type { SearchQuery, SearchTerm } from '../contract/search-query.js'

/** The FULLTEXT index on every searched column (the condition), and on `title` alone (the rank). */
export const MYSQL_SEARCH_INDEX = 'posts_search'
export const MYSQL_TITLE_INDEX = 'posts_search_title'

/** How much more a title match weighs than a match anywhere (MariaDB tells only the title apart). */
const TITLE_WEIGHT = 10

/** What the server indexes: InnoDB leaves out shorter and longer tokens and its stop words. */
export interface MysqlSearchLimits {
  /** innodb_ft_min_token_size (characters). */
  readonly minTokenSize: number
  /** innodb_ft_max_token_size (characters). */
  readonly maxTokenSize: number
  /** Lower case; empty when innodb_ft_enable_stopword is off. */
  readonly stopwords: ReadonlySet<string>
}

/**
 * A token as InnoDB splits text: letters, digits and underscores (an apostrophe, a hyphen or a
 * dot splits a word). Nothing else of a word reaches the query string, so none of the boolean
 * operators (+ - > < ( ) ~ * " @) can come from input.
 */
const MYSQL_TOKEN = /[\p{L}\p{N}_]+/gu

/**
 * Reads what the server indexes: the token sizes, and the stop word list in force (the user's or
 * server's table, else InnoDB's default list). InnoDB fixes the list of an index when it builds
 * it, so this is exact for indexes built under the current settings.
 */
export async function readMysqlSearchLimits (db: Kysely<any>): Promise<MysqlSearchLimits> {
  // SHOW VARIABLES, which MySQL and MariaDB both have (MySQL has no information_schema table of them).
  const { rows } = await sql<{ Variable_name: string, Value: string }>`SHOW VARIABLES LIKE 'innodb\\_ft\\_%'`.execute(db)
  const variable = (name: string): string => rows.find((row) => row.Variable_name.toLowerCase() === name)?.Value ?? ''
  let stopwords: string[] = []
  if (variable('innodb_ft_enable_stopword') === 'ON') {
    const table = variable('innodb_ft_user_stopword_table') || variable('innodb_ft_server_stopword_table')
    // `db/table`: an identifier pair set by the operator, quoted here.
    const [schema = '', name = ''] = table.split('/')
    const { rows: words } = table === ''
      ? await sql<{ value: string }>`SELECT value FROM information_schema.INNODB_FT_DEFAULT_STOPWORD`.execute(db)
      : await sql<{ value: string }>`SELECT value FROM ${sql.id(schema, name)}`.execute(db)
    stopwords = words.map((row) => row.value.toLowerCase())
  }
  return {
    minTokenSize: Number(variable('innodb_ft_min_token_size') || 3),
    maxTokenSize: Number(variable('innodb_ft_max_token_size') || 84),
    stopwords: new Set(stopwords)
  }
}

function isIndexed (token: string, limits: MysqlSearchLimits): boolean {
  const length = [...token].length
  return length >= limits.minTokenSize && length <= limits.maxTokenSize && !limits.stopwords.has(token.toLowerCase())
}

/**
 * A term in boolean-mode syntax, or undefined when InnoDB indexes none of its tokens (it could
 * match nothing: left out, as PostgreSQL leaves out a stop word). A single token is written bare
 * (a quoted one is a phrase search, which reads every candidate row's text); several are a phrase,
 * whose unindexed tokens InnoDB checks in the text.
 */
function booleanTerm (term: SearchTerm, limits: MysqlSearchLimits): string | undefined {
  const tokens = term.text.match(MYSQL_TOKEN) ?? []
  const indexed = tokens.filter((token) => isIndexed(token, limits))
  if (indexed.length === 0) return undefined
  return tokens.length === 1 ? indexed[0] : `"${tokens.join(' ')}"`
}

function anyOf (terms: readonly SearchTerm[], limits: MysqlSearchLimits): string | undefined {
  const written = terms.map((term) => booleanTerm(term, limits)).filter((term) => term !== undefined)
  if (written.length === 0) return undefined
  return written.length === 1 ? written[0] : `(${written.join(' ')})`
}

/**
 * The boolean-mode query string `+(a b) +c -d -"e f"`, or undefined when no wanted term is left
 * (then nothing matches). Groups with no term left are dropped.
 */
export function booleanModeQuery (query: SearchQuery, limits: MysqlSearchLimits): string | undefined {
  const wanted = query.groups.map((group) => anyOf(group, limits)).filter((group) => group !== undefined)
  if (wanted.length === 0) return undefined
  const unwanted = query.excluded.map((term) => booleanTerm(term, limits)).filter((term) => term !== undefined)
  return [...wanted.map((group) => `+${group}`), ...unwanted.map((term) => `-${term}`)].join(' ')
}

/** The wanted tokens as optional words: any of them in the title raises the rank. */
function titleRankQuery (query: SearchQuery, limits: MysqlSearchLimits): string {
  const tokens = query.groups.flat().flatMap((term) => term.text.match(MYSQL_TOKEN) ?? [])
  return [...new Set(tokens.filter((token) => isIndexed(token, limits)))].join(' ')
}

function against (columns: readonly string[], text: string): RawBuilder<number> {
  return sql<number>`MATCH (${sql.join(columns.map((column) => sql.ref(column)))}) AGAINST (${text} IN BOOLEAN MODE)`
}

/**
 * The condition MATCH … AGAINST on the FULLTEXT index of every searched column; the rank adds a
 * weighted MATCH on the title's own index when `title` is one of several searched columns.
 */
export function compileMysqlSearch (query: SearchQuery, settings: SearchSettings, limits: MysqlSearchLimits): CompiledSearch {
  const { columns } = checkSearchSettings(settings)
  const text = booleanModeQuery(query, limits)
  if (text === undefined) return { condition: sql<boolean>`FALSE`, rank: sql<number>`0` }
  const relevance = against(columns, text)
  return {
    condition: sql<boolean>`${relevance}`,
    rank: hasTitleIndex(columns) ? sql<number>`${against(['title'], titleRankQuery(query, limits))} * ${sql.lit(TITLE_WEIGHT)} + ${relevance}` : relevance
  }
}

function hasTitleIndex (columns: readonly string[]): boolean {
  return columns.length > 1 && columns.includes('title')
}

/** Creates the FULLTEXT indexes the search uses (the title's too, when it is one of several columns). */
export async function createMysqlSearchIndex (db: Kysely<any>, settings: SearchSettings): Promise<void> {
  const { columns } = checkSearchSettings(settings)
  const existing = new Set((await sql<{ name: string }>`SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts'`.execute(db)).rows.map((row) => row.name))
  const create = async (name: string, indexed: readonly string[]): Promise<void> => {
    if (existing.has(name)) return
    await sql`ALTER TABLE posts ADD FULLTEXT INDEX ${sql.id(name)} (${sql.join(indexed.map((column) => sql.id(column)))})`.execute(db)
  }
  await create(MYSQL_SEARCH_INDEX, columns)
  if (hasTitleIndex(columns)) await create(MYSQL_TITLE_INDEX, ['title'])
}
