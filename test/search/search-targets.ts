// Every engine the search runs on, behind one small interface for the search suites: a fresh
// database with the default `posts` table (the store's own `migrate`) and the search index of
// that engine, through the driver the store uses, queried as the store will query it
// (condition, rank, most relevant first, ties by slug). The in-memory index is a target too.
import Database from 'better-sqlite3'
import { CompiledQuery, Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from 'kysely'
import { createPool } from 'mysql2'
import pg from 'pg'
import { whereSearchMatches, type CompiledSearch, type SearchSettings } from '../../src/search/compiled-search.js'
import { openMemorySearchIndex, type SearchHit } from '../../src/search/memory-search-index.js'
import { compileMysqlSearch, createMysqlSearchIndex, readMysqlSearchLimits } from '../../src/search/mysql-search.js'
import { compilePostgresSearch, createPostgresSearchIndex } from '../../src/search/postgres-search.js'
import type { SearchQuery } from '../../src/contract/search-query.js'
import { compileSqliteSearch, createSqliteSearchIndex } from '../../src/search/sqlite-search.js'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'

/** A post as the search suites write it: its slug and the searched columns. */
export type PostText = {
  slug: string
  title: string
  summary: string | null
  content: string
}

export interface SearchTarget {
  readonly name: string
  /** Why it cannot run here (see TestServer.skip). */
  readonly skip: string | false
  open: (settings: SearchSettings) => Promise<OpenTarget>
}

export interface OpenTarget {
  /** Replaces every post with `posts`. */
  replacePosts: (posts: readonly PostText[]) => Promise<void>
  /** The matching posts, most relevant first, ties by slug; at most `limit`. */
  search: (query: SearchQuery, limit?: number) => Promise<SearchHit[]>
  /** The SQL of the search and the engine's plan of it (EXPLAIN). */
  explain: (query: SearchQuery) => Promise<{ sql: string, plan: string }>
  close: () => Promise<void>
}

type Compile = (query: SearchQuery) => CompiledSearch

interface SqlEngine {
  server: TestServer
  kysely: (database: TestDatabase) => Kysely<any>
  index: (db: Kysely<any>, settings: SearchSettings) => Promise<(query: SearchQuery) => CompiledSearch>
  /** The slug in bytewise order, whatever the column's collation. */
  slugOrder: ReturnType<typeof sql>
  explain: (db: Kysely<any>, text: string, parameters: readonly unknown[]) => Promise<string>
  /** Statistics after a load, as a settled database has them (the planner picks the index by them). */
  analyze?: (db: Kysely<any>) => Promise<void>
}

async function explainRows<Row> (db: Kysely<any>, text: string, parameters: readonly unknown[]): Promise<Row[]> {
  return (await db.executeQuery<Row>(CompiledQuery.raw(text, [...parameters]))).rows
}

function sqlTarget (name: string, engine: SqlEngine): SearchTarget {
  return {
    name,
    skip: engine.server.skip,
    async open (settings) {
      const database = await engine.server.create()
      const writer = await openTestStore(database.location, { writable: true })
      await writer.migrate()
      await writer.close()
      const db = engine.kysely(database)
      let compile: Compile
      try {
        compile = await engine.index(db, settings)
      } catch (err) {
        await db.destroy()
        await database.drop()
        throw err
      }
      const searchQuery = (query: SearchQuery, limit: number) => {
        const search = compile(query)
        return whereSearchMatches(db.selectFrom('posts'), search).select(['posts.slug', search.rank.as('search_rank')])
          .orderBy('search_rank', 'desc').orderBy(engine.slugOrder).limit(limit)
      }
      return {
        async replacePosts (posts) {
          await db.deleteFrom('posts').execute()
          for (let i = 0; i < posts.length; i += 500) await db.insertInto('posts').values(posts.slice(i, i + 500)).execute()
          await engine.analyze?.(db)
        },
        async search (query, limit = 1000) {
          const rows = await searchQuery(query, limit).execute()
          return rows.map((row) => ({ slug: row.slug as string, rank: Number(row.search_rank) }))
        },
        async explain (query) {
          const compiled = searchQuery(query, 20).compile()
          return { sql: compiled.sql, plan: await engine.explain(db, compiled.sql, compiled.parameters) }
        },
        async close () {
          await db.destroy()
          await database.drop()
        }
      }
    }
  }
}

export const sqliteTarget = sqlTarget('SQLite FTS5', {
  server: sqliteServer,
  kysely: (database) => new Kysely({ dialect: new SqliteDialect({ database: new Database((database.location as { filename: string }).filename) }) }),
  async index (db, settings) {
    await createSqliteSearchIndex(db, settings)
    return (query) => compileSqliteSearch(query, settings)
  },
  slugOrder: sql`posts.slug COLLATE BINARY`,
  explain: async (db, text, parameters) => (await explainRows<{ detail: string }>(db, `EXPLAIN QUERY PLAN ${text}`, parameters)).map((row) => row.detail).join('\n')
})

export const postgresTarget = sqlTarget('PostgreSQL', {
  server: postgresServer,
  kysely: (database) => {
    const pool = new pg.Pool({ connectionString: (database.location as { url: string }).url, max: 2 })
    // An idle connection ended by the server (the database dropped WITH (FORCE) at close) is an
    // 'error' on the pool; unheard, it would be an uncaught exception after the suite ended.
    pool.on('error', () => {})
    return new Kysely({ dialect: new PostgresDialect({ pool }) })
  },
  async index (db, settings) {
    await createPostgresSearchIndex(db, settings)
    return (query) => compilePostgresSearch(query, settings)
  },
  slugOrder: sql`posts.slug COLLATE "C"`,
  analyze: async (db) => { await sql`ANALYZE posts`.execute(db) },
  explain: async (db, text, parameters) => (await explainRows<{ 'QUERY PLAN': string }>(db, `EXPLAIN (ANALYZE, BUFFERS) ${text}`, parameters)).map((row) => row['QUERY PLAN']).join('\n')
})

export const mysqlTarget = sqlTarget('MariaDB FULLTEXT', {
  server: mysqlServer,
  kysely: (database) => new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: (database.location as { url: string }).url, connectionLimit: 2 }) }) }),
  async index (db, settings) {
    await createMysqlSearchIndex(db, settings)
    const limits = await readMysqlSearchLimits(db)
    return (query) => compileMysqlSearch(query, settings, limits)
  },
  slugOrder: sql`posts.slug`,
  explain: async (db, text, parameters) => (await explainRows<Record<string, unknown>>(db, `EXPLAIN ${text}`, parameters)).map((row) => JSON.stringify(row)).join('\n')
})

export const memoryTarget: SearchTarget = {
  name: 'in-memory FTS5 index',
  skip: false,
  async open (settings) {
    const index = openMemorySearchIndex(settings)
    return {
      async replacePosts (posts) { index.rebuild(posts) },
      async search (query, limit = 1000) { return index.search(query).slice(0, limit) },
      async explain () { return { sql: '', plan: '' } },
      async close () { index.close() }
    }
  }
}

export const SEARCH_TARGETS: readonly SearchTarget[] = [sqliteTarget, postgresTarget, mysqlTarget, memoryTarget]
