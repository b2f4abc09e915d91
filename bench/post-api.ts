// What a request costs the post API alone: CPU µs per response of the post API process (user +
// system, from /proc) for a detail and for the 1,000-post list, loaded by wrk straight at
// `GET /api/post/<slug>` and `GET /api/posts`, without the front. The post API keeps the bodies
// it built until the store changes, so these are its steady state; the store reads a cache miss
// costs (one post by slug, the 1,000-post list) are then timed in this process, through each
// CLI's own store module, as CPU µs per read. With several built CLIs
// (`--cli a/cli.js,b/cli.js`: two builds of the service, e.g. two SQLite bindings), each scenario
// alternates between them round by round, so that both are measured under the same conditions.
// The Node that runs this script runs the post APIs (`process.execPath`).
//
// With `--variant NAME=VALUE` (repeatable; `--variant ''` for the defaults), each variant is a
// post API of the first CLI with that setting, measured the same way: e.g. what PUBLISHED_ONLY
// costs, `--variant '' --variant PUBLISHED_ONLY=true` (the in-process store reads apply the
// publishing rule too when the variant sets it).
//
//   node --import tsx bench/post-api.ts [--cli dist/cli.js,...] [--variant NAME=VALUE ...] [--duration 20] [--rounds 4]
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { prepareSqliteDataset, slugOf } from './dataset.js'
import { createLoadGenerator, summarise, type LoadRun, type RequestSequence } from './load.js'
import type { PostStore } from '../src/store/store.js'
import { emptyUsage, freePorts, startProcess, stopProcess, watch, type Child, type Usage } from './processes.js'
import { createRandom, pick } from './random.js'

const HOST = '127.0.0.1'
const POSTS = 1000
const SEED = 20240501
const SEQUENCE_LENGTH = 100_000
const WARMUP_S = 2
/** Store reads per round and CLI (each read of the list is 1,000 posts). */
const READS = { detail: 4000, 'list-1000': 40 } as const

const { values } = parseArgs({
  options: {
    cli: { type: 'string', default: 'dist/cli.js' },
    duration: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    variant: { type: 'string', multiple: true }
  }
})
/** Each server: a CLI, and the settings it runs with. */
const variants = (values.variant ?? []).map((pair) => pair === '' ? {} : Object.fromEntries([pair.split('=', 2) as [string, string]]))
const clis = variants.length === 0 ? (values.cli).split(',').map((cli) => resolve(cli)) : variants.map(() => resolve((values.cli).split(',')[0] ?? ''))
const settingsOf = (i: number): Record<string, string> => variants[i] ?? {}
const labelOf = (i: number): string => `${clis[i] ?? ''}${variants.length === 0 ? '' : ` ${JSON.stringify(settingsOf(i))}`}`
const rounds = Number(values.rounds)
const roundS = Math.max(1, Math.round(Number(values.duration) / rounds))
const connections = Number(values.connections)

const random = createRandom(SEED)
const slugs = Array.from({ length: POSTS }, (_, i) => slugOf(i))
const SCENARIOS: Record<string, { sequence: RequestSequence, largeBodies: boolean }> = {
  detail: { sequence: Array.from({ length: SEQUENCE_LENGTH }, () => ({ path: `/api/post/${pick(random, slugs)}` })), largeBodies: false },
  'list-1000': { sequence: [{ path: '/api/posts' }], largeBodies: true }
}

const log = (message: string): void => { process.stderr.write(`${message}\n`) }

async function main (): Promise<void> {
  const [firstCli = ''] = clis
  const database = await prepareSqliteDataset(POSTS, firstCli)
  const logDir = mkdtempSync(join(tmpdir(), 'blog-bench-post-api-'))
  const load = await createLoadGenerator(1)
  const servers: Child[] = []
  try {
    const ports = await freePorts(clis.length)
    for (const [i, cli] of clis.entries()) {
      const port = ports[i] ?? 0
      const env = { ...process.env, ...settingsOf(i), HOST, DATABASE_URL: database, POSTS_PORT: String(port) }
      servers.push(await startProcess(`post API ${i + 1}`, [cli, 'posts-api'], env, `http://${HOST}:${port}`, join(logDir, `posts-api-${i + 1}.log`)))
    }
    log(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${load.name}, ${connections} connections, ${rounds} rounds of ${roundS} s`)
    for (const [name, { sequence, largeBodies }] of Object.entries(SCENARIOS)) {
      const options = { connections, countStatuses: !largeBodies }
      const runs = servers.map(() => ({ results: [] as LoadRun[], usage: emptyUsage() as Usage }))
      for (const server of servers) await load.run(server.origin, sequence, { ...options, durationS: WARMUP_S })
      for (let round = 0; round < rounds; round++) {
        for (const [i, server] of servers.entries()) {
          const run = runs[i]!
          const stop = watch([server], run.usage)
          run.results.push(await load.run(server.origin, sequence, { ...options, durationS: roundS }))
          stop()
        }
      }
      for (const [i, server] of servers.entries()) {
        const { results, usage } = runs[i]!
        const figures = summarise(results, 200)
        const cpuUs = (usage.cpuMs[server.name] ?? 0) * 1000 / Math.max(1, figures.requests)
        console.log(`${name}\t${labelOf(i)}\t${Math.round(figures.requestsPerSecond)} req/s\t${cpuUs.toFixed(0)} CPU µs/req\tp99 ${figures.p99Ms.toFixed(1)} ms\tunexpected ${figures.unexpected}`)
      }
    }
  } finally {
    for (const server of servers) await stopProcess(server)
    rmSync(logDir, { recursive: true, force: true })
  }
  await measureStoreReads(database)
}

/** CPU µs of each store read, alternating between the CLIs' stores round by round. */
async function measureStoreReads (database: string): Promise<void> {
  const stores: PostStore[] = []
  for (const [i, cli] of clis.entries()) {
    const { openSqliteStore } = await import(pathToFileURL(join(cli, '..', 'store', 'sqlite-store.js')).href) as typeof import('../src/store/sqlite-store.js')
    const store = openSqliteStore(database, { writable: false }, { publishedOnly: settingsOf(i).PUBLISHED_ONLY === 'true' })
    await store.checkSchema()
    stores.push(store)
  }
  const reads: Record<keyof typeof READS, (store: PostStore, i: number) => Promise<unknown>> = {
    detail: async (store, i) => await store.findPostBySlug(slugs[(i * 7919) % POSTS] ?? ''),
    'list-1000': async (store) => {
      let count = 0
      for await (const posts of store.streamPosts()) for (const post of posts) count += post.slug === '' ? 0 : 1
      return count
    }
  }
  for (const [name, read] of Object.entries(reads) as Array<[keyof typeof READS, typeof reads.detail]>) {
    const cpuUs = stores.map(() => 0)
    for (let round = 0; round <= rounds; round++) {
      for (const [s, store] of stores.entries()) {
        const before = process.cpuUsage()
        for (let i = 0; i < READS[name]; i++) await read(store, i)
        const used = process.cpuUsage(before)
        // Round 0 warms up (JIT, page cache).
        if (round > 0) cpuUs[s] = (cpuUs[s] ?? 0) + used.user + used.system
      }
    }
    for (const [s] of clis.entries()) console.log(`store read, ${name}\t${labelOf(s)}\t${((cpuUs[s] ?? 0) / (rounds * READS[name])).toFixed(0)} CPU µs/read`)
  }
  for (const store of stores) await store.close()
}

main().catch((err: unknown) => {
  log(`bench/post-api: ${err instanceof Error ? err.message : String(err)}`)
  process.exitCode = 1
})
