// The index the post API keeps itself when the store has none (no `migrate --search`): an FTS5
// table in an in-memory SQLite database, filled from the rows the post API reads and kept in step
// with the changes it sees. It answers the FTS5 compilation of a query with the ranking the SQLite
// store's own index gives (same tokenizer, same bm25 weights), whatever the store.
import Database from 'better-sqlite3'
import { checkSearchSettings, type SearchSettings } from './compiled-search.js'
import type { SearchQuery } from '../contract/search-query.js'
import { fts5MatchExpression, fts5RankSql, fts5Tokenizer } from './sqlite-search.js'

/** A post as the index takes it: its slug and the searched columns (text, or null). */
export type SearchRow = { readonly slug: string } & Readonly<Record<string, unknown>>

export interface SearchHit {
  readonly slug: string
  /** Larger is more relevant; equal for equal rows within one state of the index. */
  readonly rank: number
}

export interface SearchChanges {
  /** Rows added or changed: each replaces the row of its slug. */
  readonly upserted?: Iterable<SearchRow>
  /** Slugs of rows removed (unknown ones are ignored). */
  readonly deleted?: Iterable<string>
}

export interface MemorySearchIndex {
  /** Replaces every row with `rows`. */
  rebuild (rows: Iterable<SearchRow>): void
  /** Applies changes in one transaction. */
  apply (changes: SearchChanges): void
  /** Every matching post, most relevant first, ties by slug (bytewise). */
  search (query: SearchQuery): SearchHit[]
  /** The number of posts indexed. */
  readonly size: number
  close (): void
}

const TABLE = 'posts_search'

/** `hits` most relevant first, ties by slug (bytewise), in place. */
export function sortHits (hits: SearchHit[]): SearchHit[] {
  const keys = new Map(hits.map((hit) => [hit, Buffer.from(hit.slug)]))
  return hits.sort((a, b) => b.rank - a.rank || Buffer.compare(keys.get(a) as Buffer, keys.get(b) as Buffer))
}

/**
 * Opens an empty index. The FTS5 table keeps its own copy of the text: bm25() reads the row count
 * and column lengths from totals that a contentless table with deletes (which keeps no copy)
 * leaves unchanged on delete, so its ranks would drift from the store's with every edit. Rows are
 * known to it by a rowid of our own, mapped to slugs here.
 */
export function openMemorySearchIndex (settings: SearchSettings): MemorySearchIndex {
  const { columns, language } = checkSearchSettings(settings)
  const database = new Database(':memory:')
  const names = columns.map((column) => `"${column}"`).join(', ')
  // Column names are identifiers (checkSearchSettings) and the tokenizer one of two constants.
  const create = (): void => {
    database.exec(`DROP TABLE IF EXISTS ${TABLE}`)
    database.exec(`CREATE VIRTUAL TABLE ${TABLE} USING fts5(${names}, tokenize='${fts5Tokenizer(language)}')`)
  }
  create()
  const insert = database.prepare(`INSERT INTO ${TABLE} (rowid, ${names}) VALUES (?${', ?'.repeat(columns.length)})`)
  const remove = database.prepare(`DELETE FROM ${TABLE} WHERE rowid = ?`)
  const select = database.prepare(`SELECT rowid AS id, ${fts5RankSql(TABLE, columns)} FROM ${TABLE} WHERE ${TABLE} MATCH ?`).raw(true)

  const rowIds = new Map<string, number>()
  const slugs = new Map<number, string>()
  let nextRowId = 1

  const textOf = (value: unknown): string | null => value === null || value === undefined ? null : String(value)
  const drop = (slug: string): void => {
    const id = rowIds.get(slug)
    if (id === undefined) return
    remove.run(id)
    rowIds.delete(slug)
    slugs.delete(id)
  }
  const add = (row: SearchRow): void => {
    drop(row.slug)
    const id = nextRowId++
    insert.run(id, ...columns.map((column) => textOf(row[column])))
    rowIds.set(row.slug, id)
    slugs.set(id, row.slug)
  }

  return {
    rebuild: database.transaction((rows: Iterable<SearchRow>) => {
      // A new table rather than a delete of every row, which would tokenize them all again.
      create()
      rowIds.clear()
      slugs.clear()
      for (const row of rows) add(row)
    }),
    apply: database.transaction(({ upserted = [], deleted = [] }: SearchChanges) => {
      for (const slug of deleted) drop(slug)
      for (const row of upserted) add(row)
    }),
    search (query) {
      const hits = (select.all(fts5MatchExpression(query)) as Array<[number, number]>)
        .map(([id, score]) => ({ slug: slugs.get(id) as string, rank: score }))
      return sortHits(hits)
    },
    get size () {
      return rowIds.size
    },
    close: () => database.close()
  }
}
