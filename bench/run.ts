// `npm run bench`: the service's tiers as separate processes, and the baseline beside
// them, loaded alternately in the same run, so every figure is a ratio taken under the same
// conditions. Progress goes to stderr; the Markdown table to stdout and, with the JSON, to bench/results/.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, cpus, release, tmpdir, totalmem, type } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_POSTGRES_URL, preparePostgresDataset, prepareSqliteDataset, slugOf } from './dataset.js'
import { createLoadGenerator, fetchEtags, getBody, summarise, timedRequests, type LoadGenerator, type LoadRun, type RequestSequence } from './load.js'
import { pageCursors } from './page-cursors.js'
import { emptyUsage, freePorts, memoryMb, startProcess, stopProcess, waitForChildren, watch, type Child, type Usage } from './processes.js'
import { checkLoad, checkMemory, renderMarkdown, RESULTS_DIR, writeReport, type BenchReport, type LoadResult, type MemoryResult, type Target } from './report.js'
import { FULL_PLAN, MEMORY_RUN, PAGE_PATH, requestSequence, SORTED_PAGE_PATH, SCENARIO_NAMES, SCENARIOS, SMOKE_PLAN, type Phase, type ScenarioName, type Store } from './scenarios.js'

const STORES = ['sqlite', 'postgres'] as const satisfies readonly Store[]
const TARGETS: readonly Target[] = ['baseline', 'service']

const HOST = '127.0.0.1'
const BASELINE_SCRIPT = 'bench/baseline-server.ts'

interface Options {
  stores: Store[]
  scenarios: Set<ScenarioName>
  connections: number
  /** wrk's threads. */
  threads: number
  /** Measured runs per scenario and server, `roundS` seconds each (about --duration in all). */
  rounds: number
  roundS: number
  warmupS: number
  smoke: boolean
  cpuProf: boolean
  /** WORKERS of each tier (node:cluster processes; 1: none). */
  workers: string
  cli: string
  postgresUrl: string
  /** Service settings given with --set (NAME=VALUE), on top of the defaults. */
  overrides: Record<string, string>
  serviceEnv: (settings: Record<string, string>) => NodeJS.ProcessEnv
}

function parseOptions (argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      store: { type: 'string' },
      scenario: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      threads: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      workers: { type: 'string' },
      set: { type: 'string', multiple: true }
    }
  })
  const smoke = values.smoke === true
  const list = <T extends string>(value: string, allowed: readonly T[], flag: string): T[] => value.split(',').map((item) => {
    if (!(allowed as readonly string[]).includes(item)) throw new Error(`--${flag} ${item}: expected one of ${allowed.join(', ')}`)
    return item as T
  })
  const number = (value: string | undefined, fallback: number, flag: string, min: number): number => {
    const n = Number(value ?? fallback)
    if (!Number.isFinite(n) || n < min) throw new Error(`--${flag} ${value}: expected a number of at least ${min}`)
    return n
  }
  const durationS = number(values.duration, smoke ? 1 : 10, 'duration', 1)
  const rounds = Math.round(number(values.rounds, smoke ? 1 : 5, 'rounds', 1))
  const workers = values.workers ?? '1'
  if (workers !== 'auto' && !(Number.isInteger(Number(workers)) && Number(workers) >= 1)) throw new Error(`--workers ${workers}: expected a whole number of at least 1, or auto`)
  const cli = resolve(process.env.BENCH_CLI ?? 'dist/cli.js')
  if (!existsSync(cli)) throw new Error(`no built CLI at ${cli}: run \`npm run build\` or set BENCH_CLI`)
  const overrides = Object.fromEntries((values.set ?? []).map((pair) => {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair)
    if (match === null) throw new Error(`--set ${pair}: expected NAME=VALUE, a setting of the service (see --help)`)
    return [match[1], match[2]]
  }))
  return {
    stores: list(values.store ?? (smoke ? 'sqlite' : STORES.join(',')), STORES, 'store'),
    scenarios: new Set(values.scenario === undefined ? SCENARIO_NAMES : list(values.scenario, SCENARIO_NAMES, 'scenario')),
    connections: number(values.connections, 50, 'connections', 1),
    threads: Math.round(number(values.threads, 1, 'threads', 1)),
    rounds,
    // wrk and autocannon both run whole seconds.
    roundS: Math.max(1, Math.round(durationS / rounds)),
    warmupS: number(values.warmup, smoke ? 0 : 2, 'warmup', 0),
    smoke,
    cpuProf: values['cpu-prof'] === true,
    workers,
    cli,
    postgresUrl: process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL,
    overrides,
    serviceEnv: createServiceEnv(cli, overrides)
  }
}

const log = (message: string): void => { process.stderr.write(`${message}\n`) }
const message = (err: unknown): string => err instanceof Error ? err.message : String(err)

/**
 * The environment of the processes under test: the caller's, without any of the service's
 * settings (read from the serving commands' help, so new ones are covered), so that every run uses the defaults
 * (access logs at info included), but for those given with --set.
 */
function createServiceEnv (cli: string, overrides: Record<string, string>): (settings: Record<string, string>) => NodeJS.ProcessEnv {
  // Each serving command's help lists the settings it reads: `--flag VALUE  (NAME; default …)`.
  const help = ['serve', 'front', 'posts-api'].map((command) => execFileSync(process.execPath, [cli, 'help', command], { encoding: 'utf8' })).join('\n')
  const env = { ...process.env }
  const names = new Set([...help.matchAll(/^\s+--[a-z0-9-]+ .*\(([A-Z][A-Z0-9_]*)[;)]/gm)].map(([, name = '']) => name))
  for (const name of names) delete env[name]
  for (const name of Object.keys(overrides)) {
    if (!names.has(name)) throw new Error(`--set ${name}: not a setting of the service (see --help)`)
  }
  return (settings) => ({ ...env, HOST, ...overrides, ...settings })
}

interface Tiers {
  baseline: Child
  postsApi: Child
  front: Child
}

/** `logDir`: where the tiers' access logs go (at info, the default: one line per request and tier). */
async function startTiers (options: Options, store: Store, posts: number, databaseUrl: string, sqliteFile: string, stamp: string, logDir: string): Promise<Tiers> {
  const [basePort = 0, postsPort = 0, blogPort = 0] = await freePorts(3)
  const origin = (port: number): string => `http://${HOST}:${port}`
  const profile = (tier: string): string[] => options.cpuProf
    ? ['--cpu-prof', `--cpu-prof-dir=${join(RESULTS_DIR, 'profiles')}`, `--cpu-prof-name=${stamp}-${store}-${posts}-${tier}.cpuprofile`]
    : []
  const started: Child[] = []
  try {
    started.push(await startProcess('baseline', ['--import', 'tsx', BASELINE_SCRIPT, '--db', sqliteFile, '--port', String(basePort)],
      options.serviceEnv({}), origin(basePort)))
    const workers = options.workers
    started.push(await startProcess('posts-api', [...profile('posts-api'), options.cli, 'posts-api'],
      options.serviceEnv({ DATABASE_URL: databaseUrl, POSTS_PORT: String(postsPort), WORKERS: workers }), origin(postsPort), join(logDir, 'posts-api.log')))
    started.push(await startProcess('front', [...profile('front'), options.cli, 'front'],
      options.serviceEnv({ API_URL: origin(postsPort), BLOG_PORT: String(blogPort), WORKERS: workers }), origin(blogPort), join(logDir, 'front.log')))
    // A tier answers once its first worker listens; the others are forked by then and listen
    // within the warm-up.
    const workerCount = options.workers === 'auto' ? availableParallelism() : Number(options.workers)
    if (workerCount > 1) for (const child of started.slice(1)) await waitForChildren(child.pid, workerCount)
  } catch (err) {
    for (const child of started) await stopProcess(child)
    throw err
  }
  const [baseline, postsApi, front] = started as [Child, Child, Child]
  return { baseline, postsApi, front }
}

const originOf = (tiers: Tiers, target: Target): string => target === 'baseline' ? tiers.baseline.origin : tiers.front.origin
const processesOf = (tiers: Tiers, target: Target): Child[] => target === 'baseline' ? [tiers.baseline] : [tiers.postsApi, tiers.front]

/** The ratios mean something only if both answer the same bytes. */
async function compareBodies (tiers: Tiers, slugs: readonly string[], posts: number, cursors: readonly string[]): Promise<string[]> {
  // A list of 100,000 posts is too large to hold twice here; its sizes are compared by the memory run.
  const paths = [`/api/blog/${slugs[0] ?? ''}`, ...(posts <= 1000 ? ['/api/blog'] : []),
    ...(cursors.length > 1 ? [PAGE_PATH, `${PAGE_PATH}&after=${cursors[Math.floor(cursors.length / 2)] ?? ''}`] : []), SORTED_PAGE_PATH]
  const differences: string[] = []
  for (const path of paths) {
    const [baseline, service] = await Promise.all(TARGETS.map(async (target) => await getBody(originOf(tiers, target), path)))
    if (baseline !== undefined && service !== undefined && !baseline.body.equals(service.body)) {
      differences.push(`${posts} posts: GET ${path} answers differ (service ${service.status}, ${service.body.length} bytes; ` +
        `baseline ${baseline.status}, ${baseline.body.length} bytes)`)
    }
  }
  return differences
}

/**
 * Warm-up on each, then rounds alternating baseline and service, so that whatever else the
 * machine does in the meantime weighs on both alike.
 */
/** Longest wait for the front to fetch the keyed list of the page scenario's shape. */
const PRIMING_TIMEOUT_MS = 60_000

/**
 * Brings the front to its steady state for `page`: pages one at a time until it has fetched the
 * shape's keyed list (the post API's metrics count it), which it does after 256 page calls, then
 * a second for it to index the list. A service that has served pages for a while is there; how
 * long it takes under full load is in docs/performance.md, not in these figures.
 */
async function primePages (front: string, postsApi: string, sequence: RequestSequence): Promise<void> {
  const keyedAnswered = async (): Promise<boolean> =>
    /route="\/api\/posts\/keyed",method="GET",status="200"\} [1-9]/.test((await getBody(postsApi, '/metrics')).body.toString())
  const started = Date.now()
  for (let i = 0; !await keyedAnswered(); i++) {
    if (Date.now() - started > PRIMING_TIMEOUT_MS) throw new Error('the front never fetched the keyed list of the page scenario')
    for (let n = 0; n < 50; n++) await getBody(front, sequence[(i * 50 + n) % sequence.length]?.path ?? PAGE_PATH)
  }
  await new Promise((resolve) => setTimeout(resolve, 1000))
}

async function measureLoad (options: Options, load: LoadGenerator, tiers: Tiers, store: Store, posts: number, name: ScenarioName, slugs: readonly string[], cursors: readonly string[]): Promise<LoadResult> {
  const { expectedStatus, largeBodies = false } = SCENARIOS[name]
  const result: LoadResult = { kind: 'load', store, scenario: name, posts, generator: load.name, figures: {}, checks: {} }
  const runOptions = { connections: options.connections, countStatuses: !largeBodies }
  const runs: Array<{ target: Target, origin: string, sequence: RequestSequence, results: LoadRun[], usage: Usage }> = []
  for (const target of TARGETS) {
    const origin = originOf(tiers, target)
    const etags = name === 'detail-304' ? await fetchEtags(origin, slugs) : new Map<string, string>()
    if (name === 'detail-304' && etags.size < slugs.length) {
      result.error = `the ${target} sent no ETag for ${slugs.length - etags.size} of ${slugs.length} posts`
      return result
    }
    const sequence = requestSequence(name, slugs, etags, cursors)
    if (name === 'page' && target === 'service') await primePages(origin, tiers.postsApi.origin, sequence)
    if (options.warmupS > 0) await load.run(origin, sequence, { ...runOptions, durationS: options.warmupS })
    runs.push({ target, origin, sequence, results: [], usage: emptyUsage() })
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const run of runs) {
      const stopWatching = watch(processesOf(tiers, run.target), run.usage)
      run.results.push(await load.run(run.origin, run.sequence, { ...runOptions, durationS: options.roundS }))
      stopWatching()
    }
  }
  for (const run of runs) result.figures[run.target] = { ...summarise(run.results, expectedStatus), ...run.usage }
  checkLoad(result)
  return result
}

/** list-100000: few requests, each timed; its processes serve nothing else, so VmHWM is this run's peak. */
async function measureMemory (tiers: Tiers, store: Store, posts: number): Promise<MemoryResult> {
  const result: MemoryResult = { kind: 'memory', store, scenario: 'list-100000', posts, figures: {}, checks: {} }
  for (const target of TARGETS) {
    const responses = await timedRequests(originOf(tiers, target), '/api/blog', MEMORY_RUN)
    const peakRssMb = Object.fromEntries(processesOf(tiers, target).map((child) => [child.name, memoryMb(child.pid, 'VmHWM')]))
    result.figures[target] = { responses, peakRssMb }
  }
  checkMemory(result)
  return result
}

function summary (result: LoadResult | MemoryResult): string {
  if (result.error !== undefined) return result.error
  if (result.kind === 'memory') {
    const s = result.figures.service?.responses ?? []
    return `service statuses ${s.map((r) => r.status).join(',')}, first byte ≤ ${Math.round(Math.max(...s.map((r) => r.firstByteMs)))} ms, ratio ${result.ratio?.toFixed(2) ?? '–'}`
  }
  const { service, baseline } = result.figures
  return `baseline ${Math.round(baseline?.requestsPerSecond ?? 0)} req/s, service ${Math.round(service?.requestsPerSecond ?? 0)} req/s ` +
    `(ratio ${result.ratio?.toFixed(2)}, p99 ${service?.p99Ms.toFixed(1)} ms, unexpected ${service?.unexpected})`
}

async function runPhase (options: Options, load: LoadGenerator, report: BenchReport, store: Store, phase: Phase, stamp: string): Promise<void> {
  const label = `${store}, ${phase.posts} posts`
  log(`${label}: preparing the dataset (cached after the first run)`)
  const env = options.serviceEnv({})
  const sqliteFile = await prepareSqliteDataset(phase.posts, options.cli, env)
  const databaseUrl = store === 'sqlite' ? sqliteFile : await preparePostgresDataset(phase.posts, options.cli, options.postgresUrl, env)
  const slugs = Array.from({ length: phase.posts }, (_, i) => slugOf(i))
  const cursors = phase.scenarios.includes('page') ? await pageCursors(store, databaseUrl) : []
  // The access logs of the phase: written as in production, then deleted (gigabytes in a full run).
  const logDir = mkdtempSync(join(tmpdir(), 'blog-bench-logs-'))
  const tiers = await startTiers(options, store, phase.posts, databaseUrl, sqliteFile, stamp, logDir).catch((err: unknown) => {
    rmSync(logDir, { recursive: true, force: true })
    throw err
  })
  try {
    report.warnings.push(...(await compareBodies(tiers, slugs, phase.posts, cursors)).map((w) => `${store}, ${w}`))
    for (const name of phase.scenarios) {
      const result = name === 'list-100000'
        ? await measureMemory(tiers, store, phase.posts)
        : await measureLoad(options, load, tiers, store, phase.posts, name, slugs, cursors)
      report.results.push(result)
      log(`${label}: ${name}: ${summary(result)}`)
    }
  } finally {
    for (const child of [tiers.front, tiers.postsApi, tiers.baseline]) {
      const exit = child.exited()
      if (exit !== undefined) report.problems.push(`${label}: ${child.name} ended during the run (${exit}): ${child.output() || 'no output'}`)
      await stopProcess(child)
    }
    rmSync(logDir, { recursive: true, force: true })
  }
}

/** What did not work (never a figure): a scenario without its expected answers, or with others. */
function problemsOf (report: BenchReport): string[] {
  return report.results.flatMap((r) => {
    const where = `${r.store}, ${r.scenario}`
    if (r.error !== undefined) return [`${where}: ${r.error}`]
    return TARGETS.flatMap((target) => {
      if (r.kind === 'memory') {
        const bad = (r.figures[target]?.responses ?? []).filter((x) => x.status !== 200 || x.error !== undefined)
        return bad.length === 0 ? [] : [`${where}, ${target}: ${bad.length} answers not 200 (${bad.map((x) => x.error ?? x.status).join(', ')})`]
      }
      const figures = r.figures[target]
      if (figures === undefined) return []
      const statuses = figures.statuses === undefined
        ? `${figures.requests - figures.expected} with a status of 400 or more`
        : Object.entries(figures.statuses).map(([code, n]) => `${n}× ${code}`).join(', ')
      if (figures.expected === 0) return [`${where}, ${target}: no ${SCENARIOS[r.scenario].expectedStatus} answer (${statuses || 'no answer'}, ${figures.errors} errors)`]
      if (figures.unexpected > 0) return [`${where}, ${target}: ${figures.unexpected} unexpected (${statuses}; ${figures.errors} errors, ${figures.timeouts} timeouts)`]
      return []
    })
  })
}

function gitState (): { gitCommit: string, srcModified: boolean } {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return { gitCommit: git('rev-parse', '--short', 'HEAD'), srcModified: git('status', '--porcelain', '--', 'src') !== '' }
  } catch {
    return { gitCommit: 'unknown', srcModified: false }
  }
}

async function main (): Promise<void> {
  const options = parseOptions(process.argv.slice(2))
  const load = await createLoadGenerator(options.threads)
  if (load.name !== 'wrk') log('wrk is not installed (apt-get install wrk): falling back to autocannon, whose figures are flagged')
  const date = new Date().toISOString()
  const stamp = date.replace(/[:.]/g, '-')
  const report: BenchReport = {
    date,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', memoryGb: Math.round(totalmem() / 1e9), os: `${type()} ${release()}`, node: process.version },
    build: { cli: options.cli, ...gitState() },
    settings: {
      stores: options.stores,
      connections: options.connections,
      generator: load.name === 'wrk' ? `wrk, ${options.threads} thread${options.threads === 1 ? '' : 's'}` : 'autocannon (wrk is not installed: ratios lean toward 1)',
      rounds: options.rounds,
      roundS: options.roundS,
      warmupS: options.warmupS,
      smoke: options.smoke,
      cpuProf: options.cpuProf,
      workers: options.workers,
      overrides: options.overrides,
      rss: 'the highest VmRSS sampled every 100 ms during the measured run (list-100000: VmHWM of its own processes)'
    },
    results: [],
    problems: [],
    warnings: []
  }
  const plan = (options.smoke ? SMOKE_PLAN : FULL_PLAN)
    .map((phase) => ({ ...phase, scenarios: phase.scenarios.filter((name) => options.scenarios.has(name)) }))
    .filter((phase) => phase.scenarios.length > 0)
  for (const store of options.stores) {
    for (const phase of plan) {
      try {
        await runPhase(options, load, report, store, phase, stamp)
      } catch (err) {
        report.problems.push(`${store}, ${phase.posts} posts: ${message(err)}`)
        log(`${store}, ${phase.posts} posts: ${message(err)}`)
      }
    }
  }
  report.problems.push(...problemsOf(report))
  const markdown = renderMarkdown(report)
  process.stdout.write(markdown)
  log(`written to ${writeReport(report, markdown)} (and latest.md, latest.json)`)
  // Figures never fail the run; only something that did not work does.
  if (report.problems.length > 0) process.exitCode = 1
}

main().catch((err: unknown) => {
  log(`bench: ${message(err)}`)
  process.exitCode = 2
})
