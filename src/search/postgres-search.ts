// PostgreSQL full-text search: the weighted tsvector of the searched columns is a stored generated
// column of `posts` with a GIN index on it; a query is a tsquery composed with && and || of
// phraseto_tsquery() calls, each given a term's text as a parameter (phraseto_tsquery reads
// text, never tsquery syntax).
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { checkSearchSettings, columnRole, type ColumnRole, type CompiledSearch, type SearchSettings } from './compiled-search.js'
import type { SearchQuery, SearchTerm } from '../contract/search-query.js'

/**
 * The column `migrate --search` adds to `posts` (never served as a field of a post), and its GIN
 * index. Stored, not an index on the expression alone: ts_rank needs the document of every
 * matching row, and parsing 600 words again took about 2.5 ms a row (a two-word query over
 * 10,000 posts: p95 0.8 s, against 23 ms reading the stored vector). Being generated, it follows
 * every write, triggers or not.
 */
export const POSTGRES_SEARCH_COLUMN = 'blog_read_api_search'
export const POSTGRES_SEARCH_INDEX = 'posts_search'

/** The tsvector weight class of a match by column role. */
const WEIGHT_CLASS: Record<ColumnRole, 'A' | 'B' | 'C'> = { title: 'A', summary: 'B', body: 'C' }

/**
 * ts_rank's weights of the classes {D, C, B, A} (PostgreSQL's defaults but for C): a title match
 * counts ten times a body match, so one in the title outranks a few in the body.
 */
const RANK_WEIGHTS = sql.raw("'{0.1, 0.1, 0.4, 1.0}'::float4[]")

/**
 * The weighted document of a row, the stored column's expression. The language is written as a
 * literal (a generation expression takes no parameter); it comes from the settings and is checked.
 */
export function postgresDocument (settings: SearchSettings): RawBuilder<unknown> {
  const { columns, language } = checkSearchSettings(settings)
  const config = sql`${sql.lit(language)}::regconfig`
  return sql.join(columns.map((column) =>
    sql`setweight(to_tsvector(${config}, coalesce(${sql.ref(column)}, '')), ${sql.lit(WEIGHT_CLASS[columnRole(column)])})`), sql` || `)
}

/**
 * The tsquery of a group of terms; the language is bound here. A term the language drops
 * entirely (a stop word) is an empty tsquery, which && and || leave out.
 */
function anyOf (terms: readonly SearchTerm[], language: string): RawBuilder<unknown> {
  return sql`(${sql.join(terms.map((term) => sql`phraseto_tsquery(${language}::regconfig, ${term.text})`), sql` || `)})`
}

/**
 * `document @@ wanted AND NOT document @@ unwanted`: the exclusions are a separate match, not an
 * `&& !!` inside one tsquery, so that a query whose wanted words are all stop words matches
 * nothing (an empty tsquery) instead of every row without the excluded ones.
 */
export function compilePostgresSearch (query: SearchQuery, settings: SearchSettings): CompiledSearch {
  const { language } = checkSearchSettings(settings)
  const document = sql.ref(`posts.${POSTGRES_SEARCH_COLUMN}`)
  const wanted = sql`(${sql.join(query.groups.map((group) => anyOf(group, language)), sql` && `)})`
  const matches = sql<boolean>`${document} @@ ${wanted}`
  return {
    condition: query.excluded.length === 0 ? matches : sql<boolean>`${matches} AND NOT ${document} @@ ${anyOf(query.excluded, language)}`,
    rank: sql<number>`ts_rank(${RANK_WEIGHTS}, ${document}, ${wanted})`
  }
}

/**
 * Adds the document column (computed for every row: the table is rewritten under an exclusive
 * lock) and its GIN index, when absent.
 */
export async function createPostgresSearchIndex (db: Kysely<any>, settings: SearchSettings): Promise<void> {
  await sql`ALTER TABLE posts ADD COLUMN IF NOT EXISTS ${sql.id(POSTGRES_SEARCH_COLUMN)} tsvector
    GENERATED ALWAYS AS (${postgresDocument(settings)}) STORED`.execute(db)
  // Without GIN's pending list: a blog writes little, and a list of fresh entries not yet merged
  // into the index (until a vacuum) made the planner scan the table instead.
  await sql`CREATE INDEX IF NOT EXISTS ${sql.id(POSTGRES_SEARCH_INDEX)} ON posts USING GIN (${sql.id(POSTGRES_SEARCH_COLUMN)})
    WITH (fastupdate = off)`.execute(db)
}
