// Search at the post API, as a client sees it: `GET /api/posts?q=<two words>&limit=20` on a
// post API process (the built CLI) over 10,000 posts of 600 words, on each store, first with the
// post API's in-memory index (no `migrate --search`), then with the store's own index. Every
// request of a run is a different query, so each is a search the post API has not answered in
// this posts version (no kept ranked list); the same with `count=exact`, and a query asked again
// (its ranked list kept). Requests go one at a time: the figures are latencies, p95 the target's.
// Then the plan of each store's search query (EXPLAIN), as the store runs it.
//   npm run bench:search -- [--posts 10000] [--queries 200] [--stores sqlite,postgres,mysql] [--modes memory,index]
// PostgreSQL and MariaDB come from TEST_POSTGRES_URL and TEST_MYSQL_URL (fresh databases, dropped after).
import { parseArgs } from 'node:util'
import { resolve } from 'node:path'
import Database from 'better-sqlite3'
import { CompiledQuery, Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely'
import { createPool } from 'mysql2'
import pg from 'pg'
import { Pool } from 'undici'
import { parseSearchQuery } from '../src/contract/search-query.js'
import { DEFAULT_SEARCH_SETTINGS } from '../src/search/compiled-search.js'
import { findSearchIndex, presentColumns, rankedMatches } from '../src/store/store-search.js'
import type { StoreLocation } from '../src/process/setting-values.js'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestServer } from '../test/helpers/databases.js'
import { testConfig } from '../test/helpers/config.js'
import { freePorts, startProcess, stopProcess } from './processes.js'
import { createSearchCorpus, twoWordQueries } from './search-corpus.js'

const { values: options } = parseArgs({
  options: {
    posts: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '200' },
    stores: { type: 'string', default: 'sqlite,postgres,mysql' },
    /** `memory`: the post API's in-memory index (no migrate --search); `index`: the store's own. */
    modes: { type: 'string', default: 'memory,index' }
  }
})
const SERVERS: Record<string, TestServer> = { sqlite: sqliteServer, postgres: postgresServer, mysql: mysqlServer }
const CLI = resolve(process.env.BENCH_CLI ?? 'dist/cli.js')
const HOST = '127.0.0.1'
const PAGE = 20

function percentiles (samples: readonly number[]): string {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number
  return `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${at(1).toFixed(1)} ms (${samples.length} requests)`
}

async function timed (pool: Pool, path: string): Promise<number> {
  const start = performance.now()
  const { statusCode, body } = await pool.request({ method: 'GET', path })
  await body.arrayBuffer()
  if (statusCode !== 200 && statusCode !== 404) throw new Error(`${path}: ${statusCode}`)
  return performance.now() - start
}

const path = (q: string, extra = ''): string => `/api/posts?q=${encodeURIComponent(q)}&limit=${PAGE}${extra}`

/** One post API process over `location`: the first search (the in-memory index filled, where it is), then the runs. */
async function measure (label: string, location: StoreLocation, queries: readonly string[], commit: (i: number) => Promise<void>): Promise<void> {
  const [port] = await freePorts(1)
  const origin = `http://${HOST}:${port}`
  const databaseUrl = location.dialect === 'sqlite' ? location.filename : location.url
  const child = await startProcess('posts-api', [CLI, 'posts-api'], { ...process.env, DATABASE_URL: databaseUrl, POSTS_PORT: String(port), HOST, LOG_LEVEL: 'warn' }, origin)
  const pool = new Pool(origin, { connections: 1 })
  try {
    const half = Math.floor(queries.length / 2)
    console.log(`\n### ${label}\n`)
    console.log(`- first search (in-memory index filled, where it is): ${(await timed(pool, path(queries[0] as string))).toFixed(0)} ms`)
    for (const q of queries.slice(1, 11)) await timed(pool, path(q))
    const fresh: number[] = []
    for (const q of queries.slice(11, half)) fresh.push(await timed(pool, path(q)))
    console.log(`- two-word query, first 20 by relevance, each query new: ${percentiles(fresh)}`)
    const counted: number[] = []
    for (const q of queries.slice(half)) counted.push(await timed(pool, path(q, '&count=exact')))
    console.log(`- the same with count=exact, each query new: ${percentiles(counted)}`)
    const again: number[] = []
    for (const q of queries.slice(11, half)) again.push(await timed(pool, path(q, '&count=exact')))
    console.log(`- count=exact of a query asked before (its ranked list kept for the version): ${percentiles(again)}`)
    const pages: number[] = []
    for (const q of queries.slice(11, half)) {
      const cursor = await nextCursor(origin, q)
      if (cursor !== '') pages.push(await timed(pool, path(q, `&after=${encodeURIComponent(cursor)}`)))
    }
    console.log(`- its second page, where there is one (the cursor of the first): ${percentiles(pages)}`)
    const afterCommit: number[] = []
    for (let i = 0; i < 10; i++) {
      await commit(i)
      afterCommit.push(await timed(pool, path(queries[11 + i] as string)))
    }
    console.log(`- the first search after a commit (one post edited; the in-memory index brought to the new version): ${percentiles(afterCommit)}`)
  } finally {
    await pool.close()
    await stopProcess(child)
  }
}

async function nextCursor (origin: string, q: string): Promise<string> {
  const response = await fetch(`${origin}${path(q)}`)
  await response.arrayBuffer()
  const link = response.headers.get('link') ?? ''
  return new URLSearchParams(/<[^?]*\?([^>]*)>/.exec(link)?.[1] ?? '').get('after') ?? ''
}

function kyselyOf (location: StoreLocation): Kysely<any> {
  if (location.dialect === 'sqlite') return new Kysely({ dialect: new SqliteDialect({ database: new Database(location.filename, { readonly: true }) }) })
  if (location.dialect === 'postgres') return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }) })
  return new Kysely({ dialect: new MysqlDialect({ pool: createPool({ uri: location.url, connectionLimit: 1 }) }) })
}

/** The plan of the store's search query for `q` (the matches and their rank; the post API sorts and pages them). */
async function explain (location: StoreLocation, q: string): Promise<void> {
  const db = kyselyOf(location)
  try {
    const index = await findSearchIndex(db, location.dialect, presentColumns(DEFAULT_SEARCH_SETTINGS, ['title', 'summary', 'content']))
    if (index === undefined) throw new Error('no search index')
    const { sql, parameters } = rankedMatches(db.selectFrom('posts'), index.compile(parseSearchQuery(q)), []).compile()
    const prefix = location.dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : location.dialect === 'postgres' ? 'EXPLAIN (ANALYZE, COSTS OFF)' : 'EXPLAIN'
    const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`${prefix} ${sql}`, [...parameters]))
    const plan = location.dialect === 'sqlite'
      ? rows.map((row) => row.detail).join('\n')
      : location.dialect === 'postgres' ? rows.map((row) => row['QUERY PLAN']).join('\n') : rows.map((row) => JSON.stringify(row)).join('\n')
    console.log(`\nplan of \`${q}\`:\n\n\`\`\`\n${sql}\n\n${plan}\n\`\`\``)
  } finally {
    await db.destroy()
  }
}

const corpus = createSearchCorpus({ posts: Number(options.posts) })
const queries = twoWordQueries(corpus, Number(options.queries), 50, 1000)
console.log(`# Search at the post API: ${corpus.posts.length} posts of 600 words, two-word queries (each word in roughly 5 to 50 % of the posts)`)
for (const name of options.stores.split(',')) {
  const server = SERVERS[name]
  if (server === undefined) throw new Error(`unknown store ${name}`)
  console.log(`\n## ${name}`)
  if (server.skip !== false) {
    console.log(`skipped: ${server.skip}`)
    continue
  }
  const database = await server.create()
  try {
    // As `migrate` opens it: an index over the whole table is no serving read (src/cli/store-commands.ts).
    const config = testConfig({ DB_STATEMENT_TIMEOUT_MS: '600000' })
    const writer = await openTestStore(database.location, { writable: true, config })
    try {
      await writer.migrate()
      await writer.checkSchema()
      const started = performance.now()
      for (let i = 0; i < corpus.posts.length; i += 500) {
        await writer.upsertPosts(corpus.posts.slice(i, i + 500).map((post) => ({ values: { ...post } })), { dryRun: false })
      }
      console.log(`\nloaded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
      // An editor's commit: one post's content replaced by another's.
      const commit = async (i: number): Promise<void> => {
        const post = corpus.posts[(i * 97) % corpus.posts.length] as (typeof corpus.posts)[number]
        const other = corpus.posts[(i * 31 + 7) % corpus.posts.length] as (typeof corpus.posts)[number]
        await writer.upsertPosts([{ values: { ...post, content: `${other.content} ${label(i)}` } }], { dryRun: false })
      }
      const label = (i: number): string => `edit${i}x${Date.now()}`
      const modes = options.modes.split(',')
      if (modes.includes('memory')) await measure(`${name}, in-memory index (no migrate --search)`, database.location, queries, commit)
      if (!modes.includes('index')) continue
      const indexing = performance.now()
      await writer.migrate({ search: DEFAULT_SEARCH_SETTINGS })
      console.log(`\nmigrate --search: ${((performance.now() - indexing) / 1000).toFixed(1)} s`)
      if (database.location.dialect === 'postgres') await database.exec('ANALYZE posts')
      await measure(`${name}, the store's index (migrate --search)`, database.location, queries, commit)
    } finally {
      await writer.close()
    }
    if (options.modes.split(',').includes('index')) await explain(database.location, queries[0] as string)
  } finally {
    await database.drop()
  }
}
