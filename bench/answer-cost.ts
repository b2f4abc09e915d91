// The fixed cost of one answer, per process, in units that a busy machine does not blur: CPU time
// per request of the answering process (from /proc), split into user and system (kernel) time,
// or with --callgrind its instructions per request (valgrind's callgrind, counted over exactly the
// measured requests, after a warm-up).
// For small A/B decisions where `npm run bench`'s requests/s move with whatever else runs.
//   npm run build && node --import tsx bench/answer-cost.ts --scenario invalid [--target front|peer|limit] [--callgrind [--callgrind-out FILE]] [--set NAME=VALUE]
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { prepareSqliteDataset, slugOf } from './dataset.js'
import { pageCursors } from './page-cursors.js'
import { HOST, SITE_URL } from './options.js'
import { freePorts } from './processes.js'
import { requestSequence, scenarioOf, SCENARIOS, type ScenarioName } from './scenarios.js'

const MEASURED: readonly ScenarioName[] = ['invalid', 'missing', 'detail', 'list-20', 'page', 'feed.xml']
const TARGETS = ['front', 'peer', 'limit'] as const

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'invalid' },
    target: { type: 'string', default: 'front' },
    requests: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '10' },
    /** The built CLI to measure (another build kept aside, for an A/B). */
    cli: { type: 'string', default: 'dist/cli.js' },
    callgrind: { type: 'boolean', default: false },
    /** With --callgrind: where to keep its counts, for `callgrind_annotate` (the run's own folder is removed). */
    'callgrind-out': { type: 'string' },
    /** LOAD_SHED_DELAY_MS of both tiers; under callgrind 0 unless given (a bound far above valgrind's lag keeps the check without tripping it). */
    'load-shed-ms': { type: 'string' },
    /** A V8 CPU profile of the measured process, written into this folder when it ends. */
    'cpu-prof-dir': { type: 'string' },
    /** An `Origin` every request carries (with `--set CORS_ORIGIN=` naming it: a listed origin's answers). */
    origin: { type: 'string' },
    /** A setting of both tiers for this run (repeatable), e.g. `--set METRICS=off`: what a feature costs. NODE_OPTIONS also reaches the peer and the limit. */
    set: { type: 'string', multiple: true, default: [] }
  }
})
const scenario = values.scenario as ScenarioName
const target = values.target as typeof TARGETS[number]
if (!MEASURED.includes(scenario)) throw new Error(`--scenario: one of ${MEASURED.join(', ')}`)
if (!TARGETS.includes(target)) throw new Error(`--target: one of ${TARGETS.join(', ')}`)
if (target === 'peer' && scenario !== 'invalid') throw new Error('the Fastify peer answers the invalid scenario only')
const requests = Number(values.requests)
const warmup = Number(values.warmup)
const connections = Number(values.connections)
const cli = resolve(values.cli)
// The scenario's own settings (a page's keyed list needs its budget), unless --set gives them.
const settings = {
  ...scenarioOf(scenario).settings,
  ...Object.fromEntries(values.set.map((pair) => {
    const at = pair.indexOf('=')
    if (at < 1) throw new Error(`--set ${pair}: NAME=VALUE`)
    return [pair.slice(0, at), pair.slice(at + 1)]
  }))
}

const dir = mkdtempSync(join(tmpdir(), 'blog-answer-cost-'))
const children: ChildProcess[] = []
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

// The service's defaults: none of its settings from this environment.
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME, USER: process.env.USER, HOST }
const serviceEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, ...settings })
/** The peer and the limit have no settings, but Node's options (`--perf-basic-prof`, to name their JavaScript under callgrind) apply to them alike. */
const nodeOptions: NodeJS.ProcessEnv = settings.NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: settings.NODE_OPTIONS }

async function start (args: string[], env: NodeJS.ProcessEnv, port: number, log: string, callgrind = false): Promise<ChildProcess> {
  const fd = openSync(join(dir, log), 'a')
  const command = callgrind ? 'valgrind' : process.execPath
  if (values['cpu-prof-dir'] !== undefined && log !== 'posts-api.log') args = ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof-dir'])}`, ...args]
  const argv = callgrind ? ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, process.execPath, ...args] : args
  const child = spawn(command, argv, { env: { ...baseEnv, ...env }, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  children.push(child)
  const pool = new Pool(`http://${HOST}:${port}`)
  for (let tries = 0; ; tries++) {
    try {
      const { body } = await pool.request({ method: 'GET', path: '/__ready' })
      await body.dump()
      break
    } catch {
      if (child.exitCode !== null || tries > 1200) throw new Error(`${args.join(' ')} did not start: ${readFileSync(join(dir, log), 'utf8').slice(-2000)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await pool.close()
  return child
}

/** CPU time of `pid` so far, in ms: in its own code (user) and in the kernel's on its behalf (system). */
function cpuMs (pid: number): { user: number, system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
}

const requestHeaders = values.origin === undefined ? {} : { origin: values.origin }

async function load (origin: string, paths: readonly string[], count: number): Promise<void> {
  const pool = new Pool(origin, { connections })
  let next = 0
  const unexpected = new Map<number, number>()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < count) {
      const path = paths[next++ % paths.length] ?? '/'
      const { statusCode, body } = await pool.request({ method: 'GET', path, headers: requestHeaders })
      const text = await body.text()
      if (statusCode !== SCENARIOS[scenario].expectedStatus) {
        if (!unexpected.has(statusCode)) process.stderr.write(`${statusCode} ${path}: ${text.slice(0, 300)}\n`)
        unexpected.set(statusCode, (unexpected.get(statusCode) ?? 0) + 1)
      }
    }
  }))
  await pool.close()
  if (unexpected.size > 0) throw new Error(`unexpected statuses: ${JSON.stringify(Object.fromEntries(unexpected))}`)
}

const posts = scenarioOf(scenario).posts
const [postsPort = 0, port = 0] = await freePorts(2)
let server: ChildProcess
/** The dataset the front's post API or the limit serves (the peer has none). */
let database: string | undefined
if (target === 'front') {
  // Under valgrind the front's event loop lags for seconds, which load shedding answers with 503s
  // at its default bound: off in both tiers there, unless --load-shed-ms gives one.
  const shedMs = values['load-shed-ms'] ?? (values.callgrind ? '0' : undefined)
  const shed = shedMs === undefined ? {} : { LOAD_SHED_DELAY_MS: shedMs }
  database = await prepareSqliteDataset(posts, cli)
  await start([cli, 'posts-api'], serviceEnv({ DATABASE_URL: database, POSTS_PORT: String(postsPort), ...shed }), postsPort, 'posts-api.log')
  server = await start([cli, 'front'], serviceEnv({ API_URL: `http://${HOST}:${postsPort}`, BLOG_PORT: String(port), SITE_URL, ...shed }), port, 'front.log', values.callgrind)
} else if (target === 'peer') {
  server = await start(['--import', 'tsx', 'bench/fastify-peer.ts', '--port', String(port)], nodeOptions, port, 'peer.log', values.callgrind)
} else {
  database = await prepareSqliteDataset(posts, cli)
  server = await start(['--import', 'tsx', 'bench/baseline-server.ts', '--db', database, '--port', String(port)], nodeOptions, port, 'limit.log', values.callgrind)
}
const pid = server.pid as number
const slugs = Array.from({ length: posts }, (_, i) => slugOf(i))
const cursors = database !== undefined && scenarioOf(scenario).pages === true ? await pageCursors('sqlite', database) : []
const paths = requestSequence(scenario, { slugs, etags: new Map(), cursors }).map(({ path }) => path)
const origin = `http://${HOST}:${port}`

if (values.callgrind) execFileSync('callgrind_control', ['-i', 'on', String(pid)], { stdio: 'ignore', env: { ...process.env, ...baseEnv } })
await load(origin, paths, warmup)
if (values.callgrind) execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore', env: { ...process.env, ...baseEnv } })
const before = cpuMs(pid)
await load(origin, paths, requests)
const after = cpuMs(pid)
const userUs = (after.user - before.user) * 1000 / requests
const systemUs = (after.system - before.system) * 1000 / requests
// Under valgrind the split says more of valgrind than of the process.
let line = `${scenario} ${target}: ${requests} requests, ${connections} connections; ${(userUs + systemUs).toFixed(1)} CPU µs per request` +
  (values.callgrind ? '' : ` (user ${userUs.toFixed(1)}, system ${systemUs.toFixed(1)})`)
// Callgrind's counts since the zeroing above, as the file of this dump (callgrind.out.1).
if (values.callgrind) execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore', env: { ...process.env, ...baseEnv } })
if (values['cpu-prof-dir'] !== undefined) {
  // The profile is written when the process exits.
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.kill('SIGTERM')
  await exited
}
if (values.callgrind) {
  const total = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, 'callgrind.out.1'), 'utf8'))?.[1]
  line += ` (under valgrind); ${(Number(total) / requests).toFixed(0)} instructions per request`
  if (values['callgrind-out'] !== undefined) copyFileSync(join(dir, 'callgrind.out.1'), resolve(values['callgrind-out']))
}
process.stdout.write(`${line}\n`)
process.exit(0)
