// CPU cost of rendered content and feeds against the plain reads they extend, on both tiers as
// processes (the built CLI) over a SQLite dataset of 1,000 generated posts (about 600 words of
// Markdown each), loaded by wrk with 50 connections. For each scenario: requests/s and the CPU µs
// per request of each process (front + post API), then each rendered scenario's ratio to its plain
// one (the target is at most 1.5×):
//   detail?formats=html                          ÷ detail (a random post of 1,000)
//   list?limit=20&fields=slug,title,excerpt,reading_time ÷ list?limit=20 (20 whole posts)
//   feed.xml (20 posts)                           ÷ list?limit=20
// Renderings are made during the warm-up (once per content), as a running service has them.
//   npm run build && node --import tsx bench/rendered-routes.ts [--duration 10] [--warmup 5]
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { prepareSqliteDataset, slugOf } from './dataset.js'
import { emptyUsage, freePorts, startProcess, stopProcess, watch, type Child } from './processes.js'
import { createRandom, pick } from './random.js'
import { createWrkLoad } from './wrk.js'
import type { RequestSequence } from './load.js'

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, warmup: { type: 'string', default: '5' }, posts: { type: 'string', default: '1000' } } })
const DURATION_S = Number(values.duration)
const WARMUP_S = Number(values.warmup)
const POSTS = Number(values.posts)
const HOST = '127.0.0.1'
const CONNECTIONS = 50

const random = createRandom(20240501)
const slugs = Array.from({ length: POSTS }, (_, i) => slugOf(i))
const details = (search: string): RequestSequence => Array.from({ length: 100_000 }, () => ({ path: `/api/blog/${pick(random, slugs)}${search}` }))

const SCENARIOS: Array<{ name: string, sequence: RequestSequence, plain?: string }> = [
  { name: 'detail', sequence: details('') },
  { name: 'detail?formats=html', sequence: details('?formats=html'), plain: 'detail' },
  { name: 'list?limit=20', sequence: [{ path: '/api/blog?limit=20' }] },
  { name: 'list?limit=20&fields=slug,title,excerpt,reading_time', sequence: [{ path: '/api/blog?limit=20&fields=slug,title,excerpt,reading_time' }], plain: 'list?limit=20' },
  { name: 'feed.xml', sequence: [{ path: '/feed.xml' }], plain: 'list?limit=20' }
]

const cli = resolve(process.env.BENCH_CLI ?? 'dist/cli.js')
const database = await prepareSqliteDataset(POSTS, cli)
const [postsPort = 0, blogPort = 0] = await freePorts(2)
const env = (settings: Record<string, string>): NodeJS.ProcessEnv => ({ ...process.env, HOST, LOG_LEVEL: 'warn', ...settings })
const children: Child[] = []
try {
  children.push(await startProcess('posts-api', [cli, 'posts-api'], env({ DATABASE_URL: database, POSTS_PORT: String(postsPort) }), `http://${HOST}:${postsPort}`))
  children.push(await startProcess('front', [cli, 'front'], env({ API_URL: `http://${HOST}:${postsPort}`, BLOG_PORT: String(blogPort), SITE_URL: 'https://blog.example' }), `http://${HOST}:${blogPort}`))
  const origin = `http://${HOST}:${blogPort}`
  const wrk = createWrkLoad(1, 10)
  const cpuUs = new Map<string, number>()
  console.log(`${POSTS} posts, SQLite, ${CONNECTIONS} connections, ${DURATION_S} s per scenario after ${WARMUP_S} s of warm-up; Node ${process.version}`)
  console.log('| Scenario | req/s | CPU µs/req front | CPU µs/req post API | CPU µs/req total | ratio to plain |')
  console.log('|---|---|---|---|---|---|')
  for (const { name, sequence, plain } of SCENARIOS) {
    await wrk.run(origin, sequence, { connections: CONNECTIONS, durationS: WARMUP_S, countStatuses: true })
    const usage = emptyUsage()
    const stop = watch(children, usage)
    const run = await wrk.run(origin, sequence, { connections: CONNECTIONS, durationS: DURATION_S, countStatuses: true })
    stop()
    const ok = run.statuses?.['200'] ?? 0
    if (ok !== run.requests || run.errors > 0) throw new Error(`${name}: ${JSON.stringify(run.statuses)}, ${run.errors} errors`)
    const per = (process: string): number => (usage.cpuMs[process] ?? 0) * 1000 / run.requests
    const total = per('front') + per('posts-api')
    cpuUs.set(name, total)
    const ratio = plain === undefined ? '' : `${(total / cpuUs.get(plain)!).toFixed(2)}× ${plain}`
    console.log(`| ${name} | ${Math.round(run.requests / run.durationS)} | ${per('front').toFixed(0)} | ${per('posts-api').toFixed(0)} | ${total.toFixed(0)} | ${ratio} |`)
  }
} finally {
  for (const child of children) await stopProcess(child)
}
