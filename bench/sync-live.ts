// What sync costs and how fast it is, on real stores, in one process: the post API's row versions
// over the benchmark's posts (readRowVersions, median of several reads), the delay from a commit
// to its event at the post API and through a front (median and p99 over many commits, each made
// after the previous event arrived), and the front's memory per idle subscriber (1,000 streams
// opened by a child process, so that only the server's side is counted). SQLite always;
// PostgreSQL and MySQL/MariaDB when TEST_POSTGRES_URL / TEST_MYSQL_URL name a server.
//   npm run bench:sync-live [-- --posts 10000 --commits 200 --subscribers 1000 --stores sqlite,postgres,mysql]
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { pino } from 'pino'
import { request } from 'undici'
import { loadConfig, type StoreLocation } from '../src/config.js'
import { buildFrontApp } from '../src/front/app.js'
import { openUpstreamClient } from '../src/front/upstream/client.js'
import { buildPostsApp } from '../src/posts-api/app.js'
import { frontAppOptions, postsAppOptions, upstreamClientOptions } from '../src/process/tier-options.js'
import { openStore } from '../src/store/open-store.js'
import type { PostStore } from '../src/store/store.js'
import { createEventStreamParser } from '../src/sync/sse-parser.js'
import { TOKEN_POLL_MS } from '../src/sync/posts-sync.js'
import { generatePost } from './dataset.js'

const { values } = parseArgs({ options: { posts: { type: 'string', default: '10000' }, commits: { type: 'string', default: '200' }, subscribers: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' }, stores: { type: 'string', default: 'sqlite,postgres,mysql' } } })
const postCount = Number(values.posts)
const commits = Number(values.commits)
const subscriberCount = Number(values.subscribers)
const rounds = Number(values.rounds)
const config = loadConfig({ LOG_LEVEL: 'silent' })
const logger = pino({ level: 'silent' })

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number

async function open (location: StoreLocation, writable: boolean): Promise<PostStore> {
  const store = await openStore(location, { writable, onPoolError: () => {}, limits: config.storeLimits })
  if (writable) await store.migrate()
  await store.checkSchema()
  return store
}

/** A fresh database of `postCount` posts, and what drops it. */
async function createDatabase (dialect: 'sqlite' | 'postgres' | 'mysql'): Promise<{ location: StoreLocation, drop: () => Promise<void> } | undefined> {
  const name = `blog_bench_sync_${randomBytes(4).toString('hex')}`
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'blog-sync-bench-'))
    return { location: { dialect, filename: join(dir, 'blog.db') }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const server = process.env[dialect === 'postgres' ? 'TEST_POSTGRES_URL' : 'TEST_MYSQL_URL']
  if (server === undefined || server === '') return undefined
  const url = new URL(server)
  url.pathname = `/${name}`
  if (dialect === 'postgres') {
    const admin = new pg.Client({ connectionString: server })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    return { location: { dialect, url: url.href }, drop: async () => { await admin.query(`DROP DATABASE ${name} WITH (FORCE)`); await admin.end() } }
  }
  const admin = await createConnection({ uri: server })
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`)
  return { location: { dialect, url: url.href }, drop: async () => { await admin.query(`DROP DATABASE ${name}`); await admin.end() } }
}

async function fill (writer: PostStore): Promise<void> {
  for (let start = 0; start < postCount; start += 500) {
    const batch = Array.from({ length: Math.min(500, postCount - start) }, (_, i) => {
      const { id: _id, tags, published_at: publishedAt, updated_at: updatedAt, ...post } = generatePost(start + i)
      return { values: { ...post, tags: JSON.parse(tags) as string[], published_at: new Date(publishedAt), updated_at: new Date(updatedAt) } }
    })
    await writer.upsertPosts(batch, { dryRun: false })
  }
}

/** Follows a change stream, once it named the state it starts from: `next` resolves at the next event naming `slug`. */
async function follow (url: string): Promise<{ next: (slug: string) => Promise<number>, close: () => void }> {
  const controller = new AbortController()
  const waiting = new Map<string, (at: number) => void>()
  // The first event (an id alone) says the stream is followed from the state it names.
  let joined: () => void = () => {}
  const ready = new Promise<void>((resolve) => { joined = resolve })
  const response = await request(url, { headers: { accept: 'text/event-stream' }, signal: controller.signal })
  const parser = createEventStreamParser((event) => {
    joined()
    if (event.data === undefined) return
    const at = performance.now()
    for (const slug of (JSON.parse(event.data) as { upserted: string[] }).upserted) waiting.get(slug)?.(at)
  })
  ;(async () => { for await (const chunk of response.body) parser.push(chunk as Buffer) })().catch(() => {})
  await ready
  return {
    next: async (slug) => await new Promise((resolve) => waiting.set(slug, resolve)),
    close: () => controller.abort()
  }
}

/** Opens `count` idle event streams from a child process; resolves once all are open, with what ends them. */
async function idleSubscribers (url: string, count: number): Promise<() => void> {
  const script = `const net=require('net');const u=new URL(process.argv[1]);let open=0;const s=[];
for(let i=0;i<${count};i++){const c=net.connect(u.port,u.hostname,()=>c.write('GET '+u.pathname+' HTTP/1.1\\r\\nHost: x\\r\\nAccept: text/event-stream\\r\\n\\r\\n'));
c.once('data',()=>{if(++open===${count})console.log('open')});c.on('data',()=>{});s.push(c)}`
  const child = spawn(process.execPath, ['-e', script, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
  return () => child.kill()
}

async function settle (): Promise<number> {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return process.memoryUsage().heapUsed + process.memoryUsage().external
}

console.log(`| store (${postCount} posts) | row versions, ms per read (median of ${rounds}) | commit → event at the post API, median / p99 ms | commit → event through the front, median / p99 ms |`)
console.log('|---|---:|---:|---:|')
let memoryLine = ''
for (const dialect of (['sqlite', 'postgres', 'mysql'] as const).filter((name) => values.stores.split(',').includes(name))) {
  const database = await createDatabase(dialect)
  if (database === undefined) continue
  try {
    const writer = await open(database.location, true)
    await fill(writer)
    const store = await open(database.location, false)
    const times: number[] = []
    for (let i = 0; i <= rounds; i++) {
      const started = performance.now()
      await store.readRowVersions()
      if (i > 0) times.push(performance.now() - started)
    }
    const postsApp = buildPostsApp(postsAppOptions(config, { store, logger, apiDocs: false }))
    const posts = await postsApp.listen({ host: '127.0.0.1', port: 0 })
    const upstream = openUpstreamClient([new URL(posts)], upstreamClientOptions(config))
    const frontApp = buildFrontApp(frontAppOptions(config, { upstream, logger, apiDocs: false }))
    const front = await frontApp.listen({ host: '127.0.0.1', port: 0 })
    const direct = await follow(`${posts}/api/posts/changes`)
    const relayed = await follow(`${front}/api/changes`)
    const delays: { direct: number[], relayed: number[] } = { direct: [], relayed: [] }
    // Commits at random moments of the poll's period, as an editor's would be (right after an
    // event, each would wait a whole period).
    const periodMs = store.tracksChanges ? TOKEN_POLL_MS : config.sync.pollMs
    for (let i = 0; i < commits; i++) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * periodMs))
      const slug = generatePost(i % postCount).slug
      const events = [direct.next(slug), relayed.next(slug)]
      await writer.upsertPosts([{ values: { slug, title: `Edited ${i}` } }], { dryRun: false })
      const committed = performance.now()
      const [atPosts, atFront] = await Promise.all(events) as [number, number]
      delays.direct.push(atPosts - committed)
      delays.relayed.push(atFront - committed)
    }
    direct.close()
    relayed.close()
    const figure = (list: number[]): string => { const sorted = [...list].sort((a, b) => a - b); return `${percentile(sorted, 0.5).toFixed(0)} / ${percentile(sorted, 0.99).toFixed(0)}` }
    times.sort((a, b) => a - b)
    console.log(`| ${dialect} | ${percentile(times, 0.5).toFixed(1)} | ${figure(delays.direct)} | ${figure(delays.relayed)} |`)
    if (dialect === 'sqlite') {
      // One subscriber first, so that the front's upstream stream is open before the baseline.
      const first = await follow(`${front}/api/changes`)
      const before = await settle()
      const stop = await idleSubscribers(`${front}/api/changes`, subscriberCount)
      const after = await settle()
      memoryLine = `${subscriberCount} idle subscribers at the front: ${((after - before) / 1024 / 1024).toFixed(1)} MiB of heap and buffers, ${((after - before) / subscriberCount / 1024).toFixed(1)} KiB each (sockets and the hub's entries; Node ${process.version})`
      stop()
      first.close()
    }
    await frontApp.close()
    await upstream.close()
    await postsApp.close()
    await writer.close()
    await store.close()
  } finally {
    await database.drop()
  }
}
console.log(memoryLine)
process.exit(0)
