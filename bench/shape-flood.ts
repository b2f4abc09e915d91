// `npm run bench:flood`: the list-shape flood that once took a front to 1.9 GB. Both tiers started
// as in production on SQLite, PostgreSQL or MySQL/MariaDB (127.0.0.1 only); 24 list shapes (`fields` × `tag`, which clients
// choose) each paged through 260 times at once, past the 256 page calls after which the front
// indexes a shape's keyed list, then distinct page queries over those shapes for a while. Prints
// the front's RSS peak (the kernel's high-water mark) and the highest `front_cache_bytes` seen,
// and exits 1 when the peak is over --max-rss-mb. Stops by itself.
//
//   npm run bench:flood -- [--store sqlite|postgres|mysql] [--posts 100000] [--distinct-s 25] [--connections 24] [--max-rss-mb 400]
//
// PostgreSQL and MySQL/MariaDB: the servers of BENCH_POSTGRES_URL and BENCH_MYSQL_URL (defaults
// on 127.0.0.1), where it creates the bench's `blog_bench_<N>` database.
//
// FLOOD_DEBUG=1 prints the front's heap, external memory and cache gauges every 2 s instead.
// BENCH_CLI=<path>/dist/cli.js runs another build (an older commit's, to compare).
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { DEFAULT_POSTGRES_URL, preparePostgresDataset, prepareSqliteDataset } from './dataset.js'
import { DEFAULT_MYSQL_URL, prepareMysqlDataset } from './mysql-dataset.js'
import { freePorts, memoryMb, startProcess, stopProcess, type Child } from './processes.js'
import { createRandom, pick } from './random.js'

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    posts: { type: 'string', default: '100000' },
    'distinct-s': { type: 'string', default: '25' },
    connections: { type: 'string', default: '24' },
    'max-rss-mb': { type: 'string', default: '400' }
  }
})
const posts = Number(values.posts)
const distinctS = Number(values['distinct-s'])
const connections = Number(values.connections)
const maxRssMb = Number(values['max-rss-mb'])
const cli = process.env.BENCH_CLI ?? 'dist/cli.js'
const STORE_NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MySQL/MariaDB' } as const
const store = values.store as keyof typeof STORE_NAMES
if (!(store in STORE_NAMES)) throw new Error(`--store ${values.store}: expected one of ${Object.keys(STORE_NAMES).join(', ')}`)
const storeName = STORE_NAMES[store]

/** 6 field sets × 4 tags (one of them none): 24 shapes. */
const FIELD_SETS = ['slug,title', 'slug,summary', 'slug,title,summary', 'author,slug,title', 'published_at,slug,title', 'slug,tags,title']
const TAGS = [undefined, 'node', 'sql', 'caching']
const SHAPES = FIELD_SETS.flatMap((fields) => TAGS.map((tag) => `fields=${fields}${tag === undefined ? '' : `&tag=${tag}`}`))
/** Page calls per shape in the flood: past the front's threshold of 256. */
const PAGES_PER_SHAPE = 260
const PAGE_SIZE = 10

const random = createRandom(7)
/** Cursors met in next links, by shape: the distinct queries resume after them. */
const cursors = new Map<string, string[]>(SHAPES.map((shape) => [shape, []]))
const statuses = new Map<number, number>()
const count = (status: number): void => { statuses.set(status, (statuses.get(status) ?? 0) + 1) }

/** GETs `path`, counts its status, and returns the cursor of its next link, if any. */
async function page (pool: Pool, path: string): Promise<string | undefined> {
  try {
    const { statusCode, headers, body } = await pool.request({ method: 'GET', path, headersTimeout: 30_000, bodyTimeout: 30_000 })
    await body.dump()
    count(statusCode)
    const link = headers.link
    return typeof link === 'string' ? /[?&]after=([\w-]+)/.exec(link)?.[1] : undefined
  } catch {
    count(0)
    return undefined
  }
}

/** One shape paged through from its start, PAGES_PER_SHAPE pages (from the start again at its end). */
async function floodShape (pool: Pool, shape: string): Promise<void> {
  let after: string | undefined
  for (let i = 0; i < PAGES_PER_SHAPE; i++) {
    after = await page(pool, `/api/blog?limit=${PAGE_SIZE}&${shape}${after === undefined ? '' : `&after=${after}`}`)
    if (after !== undefined) cursors.get(shape)?.push(after)
  }
}

/** Distinct page queries (a random shape, limit and cursor) until `until`. */
async function distinctQueries (pool: Pool, until: number): Promise<void> {
  while (Date.now() < until) {
    const shape = pick(random, SHAPES)
    const met = cursors.get(shape) ?? []
    const after = met.length === 0 ? undefined : pick(random, met)
    await page(pool, `/api/blog?limit=${1 + Math.floor(random() * 100)}&${shape}${after === undefined ? '' : `&after=${after}`}`)
  }
}

/** The front's `front_cache_bytes` now (undefined when /metrics does not answer). */
async function cacheBytes (pool: Pool): Promise<number | undefined> {
  try {
    const { body } = await pool.request({ method: 'GET', path: '/metrics' })
    const text = await body.text()
    if (process.env.FLOOD_DEBUG !== undefined) console.log(text.split('\n').filter((l) => /^(nodejs_heap_size_(total|used)_bytes|nodejs_external_memory_bytes|process_resident_memory_bytes|blog_read_api_front_cache_(bytes|copies)) /.test(l)).join(' | '))
    const match = /^blog_read_api_front_cache_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

console.log(`Preparing ${posts} posts on ${storeName}...`)
const databaseUrl = store === 'sqlite'
  ? await prepareSqliteDataset(posts, cli)
  : store === 'postgres'
    ? await preparePostgresDataset(posts, cli, process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL)
    : await prepareMysqlDataset(posts, cli, process.env.BENCH_MYSQL_URL ?? DEFAULT_MYSQL_URL)
const [postsPort, frontPort] = await freePorts(2)
const env = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn' }
const children: Child[] = []
try {
  children.push(await startProcess('posts-api', [cli, 'posts-api'], { ...env, DATABASE_URL: databaseUrl, POSTS_PORT: String(postsPort) }, `http://127.0.0.1:${postsPort}`))
  const front = await startProcess('front', [cli, 'front'], { ...env, API_URL: `http://127.0.0.1:${postsPort}`, BLOG_PORT: String(frontPort) }, `http://127.0.0.1:${frontPort}`)
  children.push(front)
  const origin = `http://127.0.0.1:${frontPort}`
  const pool = new Pool(origin, { connections })
  const scraper = new Pool(origin, { connections: 1 })
  let maxCacheBytes = 0
  let sampledRss = 0
  const sampling = new AbortController()
  const idleRss = memoryMb(front.pid, 'VmRSS')
  const sampler = (async () => {
    while (!sampling.signal.aborted) {
      sampledRss = Math.max(sampledRss, memoryMb(front.pid, 'VmRSS'))
      maxCacheBytes = Math.max(maxCacheBytes, await cacheBytes(scraper) ?? 0)
      await new Promise((resolve) => setTimeout(resolve, process.env.FLOOD_DEBUG !== undefined ? 2000 : 200))
    }
  })()

  const started = Date.now()
  console.log(`Flood: ${SHAPES.length} shapes × ${PAGES_PER_SHAPE} pages of ${PAGE_SIZE}, all shapes at once`)
  await Promise.all(SHAPES.map(async (shape) => await floodShape(pool, shape)))
  const floodS = (Date.now() - started) / 1000
  console.log(`Distinct queries: ${distinctS} s on ${connections} connections`)
  const until = Date.now() + distinctS * 1000
  await Promise.all(Array.from({ length: connections }, async () => await distinctQueries(pool, until)))
  sampling.abort()
  await sampler
  const peakMb = memoryMb(front.pid, 'VmHWM')
  await pool.close()
  await scraper.close()

  console.log(`\nShape flood on ${storeName}, ${posts} posts, default settings (CACHE_MAX_MB 64); flood ${floodS.toFixed(1)} s, then ${distinctS} s of distinct queries`)
  console.log(`answers by status: ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status === 0 ? 'error' : status}: ${n}`).join(', ')}`)
  console.log(`front RSS peak: ${peakMb.toFixed(1)} MB (highest sampled: ${sampledRss.toFixed(1)} MB, ${idleRss.toFixed(1)} MB at start); highest front_cache_bytes: ${(maxCacheBytes / 1024 / 1024).toFixed(1)} MB`)
  for (const child of children) {
    const exit = child.exited()
    if (exit !== undefined) {
      console.error(`FAIL: ${child.name} exited during the run (${exit}): ${child.output()}`)
      process.exitCode = 1
    }
  }
  if (peakMb > maxRssMb) {
    console.error(`FAIL: the front's RSS peaked over ${maxRssMb} MB`)
    process.exitCode = 1
  }
} finally {
  for (const child of children.reverse()) await stopProcess(child)
}
