// The benchmark's posts: N deterministic rows of the default table, written to a SQLite file and
// to a PostgreSQL database (a MySQL/MariaDB one in bench/mysql-dataset.ts), all cached
// (bench/.data/, blog_bench_<N>) and keyed by N and
// GENERATOR_VERSION, so only the first run pays for the 100,000-post dataset. The `search`
// dataset is the same rows with a title, summary and content of made-up words from the search
// corpus (about 600 words a post), and the store's search index (`migrate --search`).
import { execFile } from 'node:child_process'
import { mkdirSync, existsSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import pg from 'pg'
import { createRandom, pick, randomInt, type Random } from './random.js'
import { createSearchCorpus } from './search-corpus.js'

/** Bump when a generated post changes, so every cached dataset is rebuilt. */
export const GENERATOR_VERSION = 1

const DATA_DIR = fileURLToPath(new URL('.data/', import.meta.url))

/** A row of the default `posts` table, in its column order (the order the service serialises). */
export interface BenchPost {
  id: number
  slug: string
  title: string
  summary: string
  content: string
  author: string
  /** JSON array text. */
  tags: string
  published_at: string
  updated_at: string
}

export const COLUMNS = ['id', 'slug', 'title', 'summary', 'content', 'author', 'tags', 'published_at', 'updated_at'] as const

const WORDS = ('api array async await buffer cache client column commit cursor data debug deploy design edge engine ' +
  'error event fetch field front graph handler header index input json kernel latency layer limit list load memory ' +
  'merge metric model module network node option order parse pipeline pool post profile proxy query queue read ' +
  'record render request response route row schema server slug socket sort stack state store stream string table ' +
  'test thread timeout token trace type update value version worker write').split(' ')
const AUTHORS = ['Ada Lovelace', 'Alan Turing', 'Barbara Liskov', 'Edsger Dijkstra', 'Frances Allen', 'Grace Hopper',
  'Ken Thompson', 'Leslie Lamport', 'Margaret Hamilton', 'Niklaus Wirth', 'Radia Perlman', 'Tony Hoare']
const TAGS = ['node', 'http', 'sql', 'sqlite', 'postgres', 'performance', 'caching', 'json', 'testing', 'design',
  'streams', 'security', 'typescript', 'operations', 'profiling', 'databases']

const FIRST_DATE_MS = Date.UTC(2019, 0, 1)
const DAY_MS = 86_400_000

const capitalise = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)
const words = (random: Random, min: number, max: number): string[] =>
  Array.from({ length: randomInt(random, min, max) }, () => pick(random, WORDS))
const sentence = (random: Random): string => capitalise(words(random, 8, 16).join(' ')) + '.'
const paragraph = (random: Random): string => Array.from({ length: randomInt(random, 3, 6) }, () => sentence(random)).join(' ')

/** About 3 KB of Markdown: a heading, then sections of paragraphs, lists and code. */
function markdown (random: Random, title: string): string {
  const parts = [`# ${title}`, paragraph(random)]
  let length = parts.join('\n\n').length
  while (length < 2900) {
    const [name = 'value', callee = 'read'] = words(random, 2, 2)
    const section = [
      `## ${capitalise(words(random, 2, 5).join(' '))}`,
      paragraph(random),
      Array.from({ length: randomInt(random, 3, 5) }, () => `- ${sentence(random)}`).join('\n'),
      ['```ts', `const ${name} = await ${callee}(${randomInt(random, 1, 999)})`, `console.log(${name})`, '```'].join('\n')
    ]
    parts.push(...section)
    length += section.join('\n\n').length + 2
  }
  return parts.join('\n\n') + '\n'
}

/** The first draws of post `index`: enough for its slug, which the load needs without the content. */
function beginPost (index: number): { random: Random, titleWords: string[], slug: string } {
  const random = createRandom(Math.imul(index + 1, 0x9e3779b1) ^ GENERATOR_VERSION)
  const titleWords = words(random, 3, 7)
  return { random, titleWords, slug: `post-${String(index + 1).padStart(6, '0')}-${titleWords.slice(0, 4).join('-')}` }
}

export const slugOf = (index: number): string => beginPost(index).slug

/** Post number `index` (0-based): the same for every N, so smaller datasets are prefixes of larger ones. */
export function generatePost (index: number): BenchPost {
  const { random, titleWords, slug } = beginPost(index)
  const title = titleWords.map(capitalise).join(' ')
  const summaryWords: string[] = []
  while (summaryWords.join(' ').length < 190) summaryWords.push(pick(random, WORDS))
  const tags = [...new Set(Array.from({ length: randomInt(random, 1, 4) }, () => pick(random, TAGS)))]
  const publishedMs = FIRST_DATE_MS + Math.floor(random() * 6 * 365 * DAY_MS)
  return {
    id: index + 1,
    slug,
    title,
    summary: capitalise(summaryWords.join(' ')) + '.',
    content: markdown(random, title),
    author: pick(random, AUTHORS),
    tags: JSON.stringify(tags),
    published_at: new Date(publishedMs).toISOString(),
    updated_at: new Date(publishedMs + Math.floor(random() * 90 * DAY_MS)).toISOString()
  }
}

/** `posts`: generatePost's rows; `search`: the same with the search corpus's text, and the store's search index. */
export type Dataset = 'posts' | 'search'

/** Post `index` of `dataset` (of `n` posts: the search corpus is drawn once for them all). */
export function postsOf (dataset: Dataset, n: number): (index: number) => BenchPost {
  if (dataset === 'posts') return generatePost
  const corpus = createSearchCorpus({ posts: n })
  return (index) => {
    const { title, summary, content } = corpus.posts[index] as (typeof corpus.posts)[number]
    return { ...generatePost(index), title, summary, content }
  }
}

const execFileAsync = promisify(execFile)

/** The project's own `migrate` (with `--search` for the search dataset), so the table and its indexes are the real ones. */
export async function migrate (cli: string, databaseUrl: string, env: NodeJS.ProcessEnv, search = false): Promise<void> {
  try {
    await execFileAsync(process.execPath, [cli, 'migrate', ...(search ? ['--search'] : [])], { env: { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' } })
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? ''
    throw new Error(`\`${cli} migrate\` failed for ${databaseUrl}: ${stderr.trim() || (err as Error).message}`, { cause: err })
  }
}

/**
 * The SQLite file of N posts of `dataset` (`env`: the environment `migrate` runs in); generated
 * into a temporary file and renamed, so a cached file is always complete. The search index is
 * made after the rows are in, as an operator would on an existing table.
 */
export async function prepareSqliteDataset (n: number, cli: string, env = process.env, dataset: Dataset = 'posts'): Promise<string> {
  const path = join(DATA_DIR, `${dataset}-g${GENERATOR_VERSION}-n${n}.db`)
  const search = dataset === 'search'
  if (existsSync(path)) {
    await migrate(cli, path, env, search) // idempotent: a cached file gets whatever a newer `migrate` installs
    return path
  }
  mkdirSync(DATA_DIR, { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  rmSync(temporary, { force: true })
  await migrate(cli, temporary, env)
  const db = new Database(temporary)
  try {
    const insert = db.prepare(`INSERT INTO posts (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')})`)
    const post = postsOf(dataset, n)
    db.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(post(i))
    })()
  } finally {
    db.close() // checkpoints and removes the WAL, so the single file can be renamed
  }
  if (search) await migrate(cli, temporary, env, search)
  renameSync(temporary, path)
  return path
}

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test'

/** Rows per INSERT: UNNEST arrays keep it one statement per batch with nine parameters. */
const PG_BATCH = 1000

const pgInsert = `INSERT INTO posts (${COLUMNS.join(', ')})
  SELECT id, slug, title, summary, content, author, tags::jsonb, published_at::timestamptz, updated_at::timestamptz
  FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
    AS t(${COLUMNS.join(', ')})`

async function withClient<T> (url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/**
 * The PostgreSQL database `name` (default `blog_bench_<N>`, `blog_bench_search_<N>`) on
 * `serverUrl`'s server, reused when its comment (the marker, written last) names this generator,
 * dataset and N and it holds N rows; otherwise rebuilt.
 */
export async function preparePostgresDataset (n: number, cli: string, serverUrl: string, env = process.env, dataset: Dataset = 'posts',
  name = dataset === 'posts' ? `blog_bench_${n}` : `blog_bench_${dataset}_${n}`): Promise<string> {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const search = dataset === 'search'
  const marker = `blog-read-api bench dataset: generator ${GENERATOR_VERSION}, ${search ? 'search, ' : ''}${n} posts`
  const reusable = await withClient(serverUrl, async (admin) => {
    const { rows } = await admin.query<{ marker: string | null }>(
      "SELECT shobj_description(oid, 'pg_database') AS marker FROM pg_database WHERE datname = $1", [name])
    if (rows[0]?.marker === marker) {
      const count = await withClient(url.href, async (db) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM posts')).rows[0]?.n)
      if (count === n) return true
    }
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)}`)
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`)
    return false
  })
  // Also on reuse: `migrate` is idempotent, and a newer one may install or remove what the store relies on.
  await migrate(cli, url.href, env, search && reusable)
  if (reusable) return url.href
  await withClient(url.href, async (db) => {
    const post = postsOf(dataset, n)
    await db.query('BEGIN')
    for (let start = 0; start < n; start += PG_BATCH) {
      const batch = Array.from({ length: Math.min(PG_BATCH, n - start) }, (_, i) => post(start + i))
      await db.query(pgInsert, COLUMNS.map((column) => batch.map((post) => post[column])))
    }
    await db.query('COMMIT')
  })
  // The search index after the rows, as an operator would make it on an existing table.
  if (search) await migrate(cli, url.href, env, search)
  await withClient(url.href, async (db) => {
    // Fresh statistics, so the planner uses the indexes as it would on a live table.
    await db.query('ANALYZE posts')
    await db.query(`COMMENT ON DATABASE ${db.escapeIdentifier(name)} IS ${db.escapeLiteral(marker)}`)
  })
  return url.href
}
