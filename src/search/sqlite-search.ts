// SQLite FTS5: the index is an external-content FTS5 table over `posts` kept by triggers; a
// query is one MATCH expression made only of double-quoted strings and the operators we write
// (AND, OR, NOT, parentheses), bound as a parameter; relevance is bm25() with column weights.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { checkSearchSettings, columnRole, SEARCH_ALIAS, type ColumnRole, type CompiledSearch, type SearchSettings } from './compiled-search.js'
import type { SearchQuery, SearchTerm } from '../contract/search-query.js'

/** The FTS5 table `migrate --search` creates beside `posts`. */
export const SQLITE_SEARCH_TABLE = 'posts_search'

/**
 * bm25() weight of a match by column role. bm25 already favours short columns, so a title match
 * ranks first even against a body that repeats the word.
 */
const BM25_WEIGHTS: Record<ColumnRole, number> = { title: 10, summary: 4, body: 1 }

/**
 * The tokenizer for a language: FTS5's only stemmer is Porter's English one, so `english` stems
 * and every other language matches words as they are. Diacritics are folded (`cafe` finds `café`).
 */
export function fts5Tokenizer (language: string): string {
  const words = 'unicode61 remove_diacritics 2'
  return language === 'english' ? `porter ${words}` : words
}

/** A term as an FTS5 string: its tokens, matched as a phrase when there are several. */
function fts5String (term: SearchTerm): string {
  return `"${term.text.replaceAll('"', '""')}"`
}

function alternatives (terms: readonly SearchTerm[]): string {
  return `(${terms.map(fts5String).join(' OR ')})`
}

/**
 * The FTS5 query of `query`: `(a OR b) AND (c) NOT (d OR e)`. No input is ever outside a string,
 * so none of FTS5's own syntax (NEAR, column filters, `*`, `^`, `+`) can come from it.
 */
export function fts5MatchExpression (query: SearchQuery): string {
  const wanted = query.groups.map(alternatives).join(' AND ')
  return query.excluded.length === 0 ? wanted : `(${wanted}) NOT ${alternatives(query.excluded)}`
}

/**
 * bm25() of a match in `table` (a constant name), negated so that larger is more relevant: SQL
 * text, since it holds only that name and numbers.
 */
export function fts5RankSql (table: string, columns: readonly string[]): string {
  return `-bm25(${table}, ${columns.map((column) => BM25_WEIGHTS[columnRole(column)]).join(', ')})`
}

/**
 * The matches as a derived table (rowid, rank) of one FTS5 query, joined to `posts` by rowid:
 * bm25() can only rank in the FTS5 query itself (a correlated rank query per row ran the MATCH
 * again for each, seconds for a common word).
 */
export function compileSqliteSearch (query: SearchQuery, settings: SearchSettings): CompiledSearch {
  const { columns } = checkSearchSettings(settings)
  const table = sql.table(SQLITE_SEARCH_TABLE)
  const search = sql.table(SEARCH_ALIAS)
  return {
    join: {
      table: sql`(SELECT rowid AS search_rowid, ${sql.raw(fts5RankSql(SQLITE_SEARCH_TABLE, columns))} AS search_rank
        FROM ${table} WHERE ${table} MATCH ${fts5MatchExpression(query)})`,
      on: sql<boolean>`${search}.search_rowid = posts.rowid`
    },
    rank: sql<number>`${search}.search_rank`
  }
}

/**
 * Creates the FTS5 table over `posts` (its rowid), the triggers that keep it equal to the table
 * on every write, and fills it. `posts` must be a rowid table.
 */
export async function createSqliteSearchIndex (db: Kysely<any>, settings: SearchSettings): Promise<void> {
  const { columns, language } = checkSearchSettings(settings)
  const table = sql.table(SQLITE_SEARCH_TABLE)
  const names = sql.join(columns.map((column) => sql.id(column)))
  const values = (row: 'new' | 'old'): RawBuilder<unknown> => sql.join(columns.map((column) => sql`${sql.raw(row)}.${sql.id(column)}`))
  const changed = sql.join([sql`old.rowid IS NOT new.rowid`, ...columns.map((column) => sql`old.${sql.id(column)} IS NOT new.${sql.id(column)}`)], sql` OR `)
  // The tokenizer is one of two constants (fts5Tokenizer), never input.
  await sql`CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(${names}, content='posts', tokenize=${sql.lit(fts5Tokenizer(language))})`.execute(db)
  await sql`CREATE TRIGGER IF NOT EXISTS posts_search_insert AFTER INSERT ON posts BEGIN
    INSERT INTO ${table} (rowid, ${names}) VALUES (new.rowid, ${values('new')});
  END`.execute(db)
  await sql`CREATE TRIGGER IF NOT EXISTS posts_search_delete AFTER DELETE ON posts BEGIN
    INSERT INTO ${table} (${table}, rowid, ${names}) VALUES ('delete', old.rowid, ${values('old')});
  END`.execute(db)
  await sql`CREATE TRIGGER IF NOT EXISTS posts_search_update AFTER UPDATE ON posts WHEN ${changed} BEGIN
    INSERT INTO ${table} (${table}, rowid, ${names}) VALUES ('delete', old.rowid, ${values('old')});
    INSERT INTO ${table} (rowid, ${names}) VALUES (new.rowid, ${values('new')});
  END`.execute(db)
  await sql`INSERT INTO ${table} (${table}) VALUES ('rebuild')`.execute(db)
}
