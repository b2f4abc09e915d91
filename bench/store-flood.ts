// What a flood of distinct uncached queries does to the answers the post API holds already:
// wrk asks for held posts (cached) alone, then while a second wrk floods it with list queries no
// copy answers (each a store read), against one post API over the PostgreSQL bench dataset
// (1,000 posts) and then over SQLite. Run once with STORE_CONCURRENCY at its default and once
// effectively unbounded, to show what the bound buys. Prints, per run: the cached answers' p99
// alone and under the flood, and the flood's answers by status (503: refused by the bound).
//
//   npm run build && node --import tsx bench/store-flood.ts [--duration 10] [--postgres URL] [--concurrency 10,1000] [--stores postgres,sqlite]
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_POSTGRES_URL, preparePostgresDataset, prepareSqliteDataset, slugOf } from './dataset.js'
import type { LoadRun, RequestSequence } from './load.js'
import { freePorts, startProcess, stopProcess } from './processes.js'
import { createWrkLoad } from './wrk.js'

const HOST = '127.0.0.1'
const POSTS = 1000
/** Held posts the cached load cycles through (all built before measuring). */
const HELD = 100
const CACHED_CONNECTIONS = 10
const FLOOD_CONNECTIONS = 100

const { values } = parseArgs({
  options: {
    cli: { type: 'string', default: 'dist/cli.js' },
    duration: { type: 'string', default: '10' },
    postgres: { type: 'string', default: process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL },
    concurrency: { type: 'string', default: '10,1000' },
    stores: { type: 'string', default: 'postgres,sqlite' }
  }
})
const cli = resolve(values.cli)
const durationS = Number(values.duration)

const cached: RequestSequence = Array.from({ length: HELD }, (_, i) => ({ path: `/api/post/${slugOf(i)}` }))
// 100 limits × 16 column sets = 1,600 distinct pages, more than the 1,000 lists the post API
// keeps per change token: cycled in order, none is ever held when it comes round again.
const COLUMNS = ['title', 'summary', 'author', 'tags']
const columnSets = Array.from({ length: 16 }, (_, mask) => ['slug', ...COLUMNS.filter((_, bit) => (mask & (1 << bit)) !== 0)].join(','))
const flood: RequestSequence = Array.from({ length: 1600 }, (_, i) => ({ path: `/api/posts?limit=${(i % 100) + 1}&fields=${columnSets[Math.floor(i / 100)] ?? 'slug'}` }))

const log = (message: string): void => { process.stderr.write(`${message}\n`) }
const ms = (run: LoadRun): string => `p99 ${run.p99Ms.toFixed(1)} ms (p50 ${run.p50Ms.toFixed(2)}, ${Math.round(run.requests / run.durationS)} req/s)`

async function measure (store: string, database: string, concurrency: number): Promise<void> {
  const [port = 0] = await freePorts(1)
  const logDir = mkdtempSync(join(tmpdir(), 'blog-bench-flood-'))
  const env = { ...process.env, HOST, DATABASE_URL: database, POSTS_PORT: String(port), STORE_CONCURRENCY: String(concurrency), LOG_LEVEL: 'warn' }
  const server = await startProcess('post API', [cli, 'posts-api'], env, `http://${HOST}:${port}`, join(logDir, 'posts-api.log'))
  const load = createWrkLoad(1, 10)
  try {
    const options = { connections: CACHED_CONNECTIONS, countStatuses: true }
    // Warm-up: every held post built, the JIT warm.
    await load.run(server.origin, cached, { ...options, durationS: 2 })
    const alone = await load.run(server.origin, cached, { ...options, durationS })
    const [underFlood, flooding] = await Promise.all([
      load.run(server.origin, cached, { ...options, durationS }),
      load.run(server.origin, flood, { connections: FLOOD_CONNECTIONS, countStatuses: true, durationS })
    ])
    console.log(`${store}\tSTORE_CONCURRENCY=${concurrency}\tcached alone: ${ms(alone)}\tcached under flood: ${ms(underFlood)}\t` +
      `ratio ${(underFlood.p99Ms / alone.p99Ms).toFixed(1)}\tflood: ${ms(flooding)} ${JSON.stringify(flooding.statuses)}\tcached statuses ${JSON.stringify(underFlood.statuses)}`)
  } finally {
    await stopProcess(server)
    rmSync(logDir, { recursive: true, force: true })
  }
}

async function main (): Promise<void> {
  log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg()[0]?.toFixed(1) ?? '?'}, ${durationS} s per run`)
  const prepare: Record<string, () => Promise<string>> = {
    // A database of its own: a shared one may be rebuilt by another benchmark meanwhile.
    postgres: async () => await preparePostgresDataset(POSTS, cli, values.postgres, process.env, 'posts', `blog_flood_bench_${POSTS}`),
    sqlite: async () => await prepareSqliteDataset(POSTS, cli)
  }
  for (const store of values.stores.split(',')) {
    const database = await (prepare[store] ?? (() => { throw new Error(`--stores: no store ${store}`) }))()
    for (const concurrency of values.concurrency.split(',').map(Number)) await measure(store, database, concurrency)
  }
}

main().catch((err: unknown) => {
  log(`bench/store-flood: ${err instanceof Error ? err.message : String(err)}`)
  process.exitCode = 1
})
