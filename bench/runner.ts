// One phase of the benchmark: a dataset, the tiers and the baseline started on it as processes,
// and each of its scenarios loaded on them in turn.
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { preparePostgresDataset, prepareSqliteDataset, slugOf } from './dataset.js'
import { prepareMysqlDataset } from './mysql-dataset.js'
import { fetchEtags, getBody, summarise, timedRequests, type LoadGenerator, type LoadRun, type RequestSequence } from './load.js'
import { HOST, SITE_URL, type Options } from './options.js'
import { pageCursors } from './page-cursors.js'
import { cpuMs, emptyUsage, freePorts, memoryMb, startProcess, stopProcess, waitForChildren, watch, type Child, type Usage } from './processes.js'
import { checkLoad, checkMemory, checkShare, checkVersus, RESULTS_DIR, TARGETS, type BenchReport, type LoadResult, type MemoryResult, type Target } from './report.js'
import { baselineServes, homeOf, MEMORY_RUN, PAGE_PATH, requestSequence, SORTED_PAGE_PATH, scenarioOf, type Phase, type ScenarioName, type Store } from './scenarios.js'

const BASELINE_SCRIPT = 'bench/baseline-server.ts'

export const log = (message: string): void => { process.stderr.write(`${message}\n`) }

interface Tiers {
  baseline: Child
  postsApi: Child
  front: Child
  /** The naive Fastify peer, started where a scenario of the phase is measured against it. */
  peer?: Child
}

const PEER_SCRIPT = 'bench/fastify-peer.ts'

/** `logDir`: where the tiers' access logs go (at info, the default: one line per request and tier). */
async function startTiers (options: Options, store: Store, phase: Phase, databaseUrl: string, sqliteFile: string, stamp: string, logDir: string): Promise<Tiers> {
  const { posts } = phase
  const [basePort = 0, postsPort = 0, blogPort = 0, peerPort = 0] = await freePorts(4)
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
    // A scenario's own settings, unless --set gives them.
    const settings = Object.fromEntries(phase.scenarios.flatMap((name) => Object.entries(scenarioOf(name).settings ?? {}))
      .filter(([name]) => options.overrides[name] === undefined))
    started.push(await startProcess('front', [...profile('front'), options.cli, 'front'],
      options.serviceEnv({ API_URL: origin(postsPort), BLOG_PORT: String(blogPort), WORKERS: workers, SITE_URL, ...settings }), origin(blogPort), join(logDir, 'front.log')))
    // A tier answers once its first worker listens; the others are forked by then and listen
    // within the warm-up.
    const workerCount = options.workers === 'auto' ? availableParallelism() : Number(options.workers)
    if (workerCount > 1) for (const child of started.slice(1)) await waitForChildren(child.pid, workerCount)
    if (phase.scenarios.some((name) => scenarioOf(name).minPeerRatio !== undefined)) {
      started.push(await startProcess('peer', ['--import', 'tsx', PEER_SCRIPT, '--port', String(peerPort)], options.serviceEnv({}), origin(peerPort)))
    }
  } catch (err) {
    for (const child of started) await stopProcess(child)
    throw err
  }
  const [baseline, postsApi, front, peer] = started as [Child, Child, Child, Child | undefined]
  return { baseline, postsApi, front, ...(peer === undefined ? {} : { peer }) }
}

function originOf (tiers: Tiers, target: Target): string {
  if (target === 'peer') return (tiers.peer ?? tiers.front).origin
  return target === 'baseline' ? tiers.baseline.origin : tiers.front.origin
}

function processesOf (tiers: Tiers, target: Target): Child[] {
  if (target === 'peer') return tiers.peer === undefined ? [] : [tiers.peer]
  return target === 'baseline' ? [tiers.baseline] : [tiers.postsApi, tiers.front]
}

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

/**
 * Warm-up on each target, then rounds alternating baseline and service, so that whatever else the
 * machine does in the meantime weighs on both alike. A scenario the baseline does not serve loads the service alone.
 */
async function measureLoad (options: Options, load: LoadGenerator, tiers: Tiers, store: Store, phase: Phase, name: ScenarioName, slugs: readonly string[], cursors: readonly string[], settled: Set<Target>): Promise<LoadResult> {
  const scenario = scenarioOf(name)
  const { expectedStatus, largeBodies = false } = scenario
  const result: LoadResult = { kind: 'load', store, scenario: name, posts: phase.posts, dataset: phase.dataset, generator: load.name, figures: {}, checks: {} }
  const runOptions = { connections: options.connections, countStatuses: !largeBodies }
  const runs: Array<{ target: Target, origin: string, sequence: RequestSequence, results: LoadRun[], usage: Usage }> = []
  const peer: Target[] = scenario.minPeerRatio !== undefined && tiers.peer !== undefined ? ['peer'] : []
  for (const target of baselineServes(name) ? [...TARGETS, ...peer] : ['service' as const]) {
    const origin = originOf(tiers, target)
    const etags = scenario.etags === true ? await fetchEtags(origin, slugs) : new Map<string, string>()
    if (scenario.etags === true && etags.size < slugs.length) {
      result.error = `the ${target} sent no ETag for ${slugs.length - etags.size} of ${slugs.length} posts`
      return result
    }
    const sequence = requestSequence(name, { slugs, etags, cursors })
    if (scenario.keyedList === true && target === 'service') await primePages(origin, tiers.postsApi.origin, sequence)
    // A target's first scenario of the phase settles it first (its processes are new).
    const warmupS = options.warmupS + (settled.has(target) ? 0 : options.settleS)
    settled.add(target)
    if (warmupS > 0) await load.run(origin, sequence, { ...runOptions, durationS: warmupS })
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
  const home = homeOf(name, options.smoke)
  checkLoad(result, home.dataset === phase.dataset && home.posts === phase.posts)
  return result
}

/** A memory run: few requests, each timed; its processes serve nothing else, so VmHWM is this run's peak. */
async function measureMemory (tiers: Tiers, store: Store, posts: number, name: ScenarioName, slugs: readonly string[]): Promise<MemoryResult> {
  const result: MemoryResult = { kind: 'memory', store, scenario: name, posts, figures: {}, checks: {} }
  const path = requestSequence(name, { slugs, etags: new Map(), cursors: [] })[0]?.path ?? '/api/blog'
  for (const target of TARGETS) {
    const children = processesOf(tiers, target)
    const cpuBefore = children.map((child) => cpuMs(child.pid))
    const alone = await timedRequests(originOf(tiers, target), path, { sequential: MEMORY_RUN.sequential, concurrent: 0 })
    // What one list alone costs each process: the sequential requests' CPU, per list.
    const cpuMsPerList = Object.fromEntries(children.map((child, i) => [child.name, (cpuMs(child.pid) - (cpuBefore[i] ?? 0)) / MEMORY_RUN.sequential]))
    const atOnce = await timedRequests(originOf(tiers, target), path, { sequential: 0, concurrent: MEMORY_RUN.concurrent })
    const peakRssMb = Object.fromEntries(children.map((child) => [child.name, memoryMb(child.pid, 'VmHWM')]))
    result.figures[target] = { responses: [...alone, ...atOnce], peakRssMb, cpuMsPerList }
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
  if (result.versus !== undefined) {
    const share = result.share === undefined ? '' : `; ratio ${result.share.ratio?.toFixed(2) ?? '–'} against ${result.share.scenario}'s ${result.share.of?.toFixed(2) ?? '–'}`
    return `service ${Math.round(service?.requestsPerSecond ?? 0)} req/s (against ${result.versus.scenario}: req/s ×${result.versus.requestsRatio?.toFixed(2) ?? '–'}, ` +
      `CPU per request ×${result.versus.cpuRatio?.toFixed(2) ?? '–'}, bytes per answer ×${result.versus.bytesRatio?.toFixed(2) ?? '–'}${share}; p99 ${service?.p99Ms.toFixed(1)} ms, unexpected ${service?.unexpected})`
  }
  if (baseline === undefined) return `service ${Math.round(service?.requestsPerSecond ?? 0)} req/s (p99 ${service?.p99Ms.toFixed(1)} ms, unexpected ${service?.unexpected})`
  return `baseline ${Math.round(baseline?.requestsPerSecond ?? 0)} req/s, service ${Math.round(service?.requestsPerSecond ?? 0)} req/s ` +
    `(ratio ${result.ratio?.toFixed(2)}, p99 ${service?.p99Ms.toFixed(1)} ms, unexpected ${service?.unexpected})`
}

export async function runPhase (options: Options, load: LoadGenerator, report: BenchReport, store: Store, phase: Phase, stamp: string): Promise<void> {
  const label = `${store}, ${phase.posts} posts${phase.dataset === 'posts' ? '' : ` (${phase.dataset})`}`
  log(`${label}: preparing the dataset (cached after the first run)`)
  const env = options.serviceEnv({})
  const sqliteFile = await prepareSqliteDataset(phase.posts, options.cli, env, phase.dataset)
  const databaseUrl = store === 'sqlite'
    ? sqliteFile
    : store === 'postgres'
      ? await preparePostgresDataset(phase.posts, options.cli, options.postgresUrl, env, phase.dataset)
      : await prepareMysqlDataset(phase.posts, options.cli, options.mysqlUrl, env, phase.dataset)
  const slugs = Array.from({ length: phase.posts }, (_, i) => slugOf(i))
  const cursors = phase.scenarios.some((name) => scenarioOf(name).pages === true) ? await pageCursors(store, databaseUrl) : []
  // The access logs of the phase: written as in production, then deleted (gigabytes in a full run).
  const logDir = mkdtempSync(join(tmpdir(), 'blog-bench-logs-'))
  const tiers = await startTiers(options, store, phase, databaseUrl, sqliteFile, stamp, logDir).catch((err: unknown) => {
    rmSync(logDir, { recursive: true, force: true })
    throw err
  })
  try {
    report.warnings.push(...(await compareBodies(tiers, slugs, phase.posts, cursors)).map((w) => `${store}, ${w}`))
    const results = new Map<ScenarioName, LoadResult | MemoryResult>()
    const settled = new Set<Target>()
    for (const name of phase.scenarios) {
      const result = scenarioOf(name).memory === true
        ? await measureMemory(tiers, store, phase.posts, name, slugs)
        : await measureLoad(options, load, tiers, store, phase, name, slugs, cursors, settled)
      // The scenarios it is measured against come before it in the table, so they have run.
      const { versus, minShareOf } = scenarioOf(name)
      const plain = versus === undefined ? undefined : results.get(versus)
      if (result.kind === 'load' && plain?.kind === 'load') checkVersus(result, plain)
      const here = minShareOf === undefined ? undefined : results.get(minShareOf.scenario)
      if (result.kind === 'load' && here?.kind === 'load' && minShareOf !== undefined) {
        // That scenario on its own dataset: this phase, or an earlier one (phases follow the table).
        const { dataset, posts } = homeOf(minShareOf.scenario, options.smoke)
        const home = report.results.find((r): r is LoadResult => r.kind === 'load' && r.store === store && r.scenario === minShareOf.scenario && r.dataset === dataset && r.posts === posts)
        checkShare(result, here, home)
      }
      results.set(name, result)
      report.results.push(result)
      log(`${label}: ${name}: ${summary(result)}`)
    }
  } finally {
    for (const child of [tiers.front, tiers.postsApi, tiers.baseline, ...(tiers.peer === undefined ? [] : [tiers.peer])]) {
      const exit = child.exited()
      if (exit !== undefined) report.problems.push(`${label}: ${child.name} ended during the run (${exit}): ${child.output() || 'no output'}`)
      await stopProcess(child)
    }
    rmSync(logDir, { recursive: true, force: true })
  }
}
