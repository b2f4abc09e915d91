// `npm run soak`: a mixed load (list, detail, 404, 400) for a bounded time against both tiers,
// started as in production on PostgreSQL, printing requests served, answers by status, and the
// RSS of each process over time and its peak. Exits 1 on any unexpected status or a rising RSS after warm-up.
//
//   npm run soak -- [--duration 60] [--posts 1000] [--connections 20]
import { parseArgs } from 'node:util'
import { DEFAULT_POSTGRES_URL, preparePostgresDataset, slugOf } from './dataset.js'
import { createLoadGenerator, type RequestSpec } from './load.js'
import { freePorts, memoryMb, startProcess, stopProcess, type Child } from './processes.js'
import { createRandom, pick } from './random.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    posts: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '20' }
  }
})
const durationS = Number(values.duration)
const posts = Number(values.posts)
const connections = Number(values.connections)
const cli = process.env.BENCH_CLI ?? 'dist/cli.js'
/** RSS is compared after this share of the run, once caches and pools are warm. */
const WARM_UP_SHARE = 1 / 3
/** A later third of the run holding more than this much more than the middle third is a rise. */
const MAX_RSS_GROWTH = 0.1
const EXPECTED = new Set(['200', '400', '404'])

const random = createRandom(42)
const slugs = Array.from({ length: posts }, (_, i) => slugOf(i))
/** The mix: 10 % list, 60 % detail, 15 % missing (404), 15 % invalid (400). */
const mix = Array.from({ length: 100_000 }, nextRequest)
function nextRequest (): RequestSpec {
  const roll = random()
  if (roll < 0.1) return { path: '/api/blog' }
  if (roll < 0.7) return { path: `/api/blog/${pick(random, slugs)}` }
  if (roll < 0.85) return { path: `/api/blog/absent-${Math.floor(random() * 1e6)}` }
  return { path: `/api/blog/Not_A_Slug_${Math.floor(random() * 1e6)}` }
}

const databaseUrl = await preparePostgresDataset(posts, cli, process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL)
const [postsPort, frontPort] = await freePorts(2)
const env = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn' }
const children: Child[] = []
try {
  children.push(await startProcess('posts-api', [cli, 'posts-api'], { ...env, DATABASE_URL: databaseUrl, POSTS_PORT: String(postsPort) }, `http://127.0.0.1:${postsPort}`))
  children.push(await startProcess('front', [cli, 'front'], { ...env, API_URL: `http://127.0.0.1:${postsPort}`, BLOG_PORT: String(frontPort) }, `http://127.0.0.1:${frontPort}`))

  const samples: Array<{ second: number, rss: number[] }> = []
  const started = Date.now()
  const sampler = setInterval(() => {
    samples.push({ second: Math.round((Date.now() - started) / 1000), rss: children.map((c) => memoryMb(c.pid, 'VmRSS')) })
  }, 1000)
  const origin = `http://127.0.0.1:${frontPort}`
  const load = await createLoadGenerator(1)
  const run = await load.run(origin, mix, { connections, durationS, countStatuses: true })
  clearInterval(sampler)
  // The kernel's high-water mark: a peak between two samples counts too.
  const peaks = children.map((c) => memoryMb(c.pid, 'VmHWM'))

  const statuses = Object.entries(run.statuses ?? {}).map(([code, count]) => ({ code, count }))
  const unexpected = statuses.filter((s) => !EXPECTED.has(s.code)).reduce((sum, s) => sum + s.count, 0) + run.errors + run.timeouts
  console.log(`\nSoak: ${durationS} s, ${connections} connections (${load.name}), ${posts} posts on PostgreSQL, mix 10 % list / 60 % detail / 15 % 404 / 15 % 400`)
  console.log(`requests served: ${run.requests} (${Math.round(run.requests / run.durationS)}/s), p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms`)
  console.log(`by status: ${statuses.map((s) => `${s.code}: ${s.count}`).join(', ')}; errors: ${run.errors}, timeouts: ${run.timeouts}`)
  console.log(`unexpected (not 200/400/404, or errors): ${unexpected}\n`)
  console.log(`| second | ${children.map((c) => `${c.name} RSS (MB)`).join(' | ')} |`)
  console.log(`|---:|${children.map(() => '---:').join('|')}|`)
  for (const sample of samples.filter((_, i) => i % 5 === 4 || i === samples.length - 1)) {
    console.log(`| ${sample.second} | ${sample.rss.map((mb) => mb.toFixed(1)).join(' | ')} |`)
  }

  // After warm-up, the last third must not hold much more than the middle third.
  const warm = samples.slice(Math.floor(samples.length * WARM_UP_SHARE))
  const half = Math.floor(warm.length / 2)
  const mean = (rows: typeof samples, i: number): number => rows.reduce((sum, row) => sum + (row.rss[i] ?? 0), 0) / Math.max(1, rows.length)
  const growth = children.map((_, i) => mean(warm.slice(half), i) / Math.max(1, mean(warm.slice(0, half), i)) - 1)
  console.log(`\nRSS peak: ${children.map((c, i) => `${c.name} ${peaks[i]!.toFixed(1)} MB`).join(', ')}`)
  console.log(`RSS after warm-up, last half vs first half: ${children.map((c, i) => `${c.name} ${(growth[i]! * 100).toFixed(1)} %`).join(', ')}`)
  const rising = growth.some((g) => g > MAX_RSS_GROWTH)
  if (unexpected > 0 || rising) {
    console.error(unexpected > 0 ? 'FAIL: unexpected statuses' : 'FAIL: RSS keeps rising after warm-up')
    process.exitCode = 1
  }
} finally {
  for (const child of children.reverse()) await stopProcess(child)
}
