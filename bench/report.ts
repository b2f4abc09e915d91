// The results: checked against each scenario's targets (bench/scenarios.ts), rendered as
// Markdown, and written with the JSON under bench/results/ (a timestamped pair, and latest.json /
// latest.md).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadFigures, TimedResponse } from './load.js'
import type { Usage } from './processes.js'
import type { Machine } from './machine.js'
import type { Dataset } from './dataset.js'
import { baselineServes, MEMORY_RUN, scenarioOf, type ScenarioName, type Store } from './scenarios.js'

export const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url))
/** The naive Fastify peer is loaded too where a scenario has a target against it (minPeerRatio). */
export type Target = 'baseline' | 'service' | 'peer'
export const TARGETS: readonly Target[] = ['baseline', 'service']

export interface LoadResult {
  kind: 'load'
  store: Store
  scenario: ScenarioName
  posts: number
  dataset: Dataset
  /** What loaded the servers: wrk, or the autocannon fallback. */
  generator: 'wrk' | 'autocannon'
  figures: Partial<Record<Target, LoadFigures & Usage>>
  /** Service requests/s over baseline requests/s. */
  ratio?: number
  /** Service requests/s over the naive Fastify peer's, where it was loaded. */
  peerRatio?: number
  /** A scenario the baseline does not serve: the service's figures over those of the scenario it extends. */
  versus?: { scenario: ScenarioName, requestsRatio?: number, cpuRatio?: number, bytesRatio?: number }
  /** Its `minShareOf` target: its ratio to the baseline (see Scenario), and that scenario's own. */
  share?: { scenario: ScenarioName, ratio?: number, of?: number }
  checks: { ratio?: boolean, peer?: boolean, p99?: boolean, cost?: boolean, share?: boolean }
  error?: string
}

export interface MemoryResult {
  kind: 'memory'
  store: Store
  scenario: ScenarioName
  posts: number
  /** `cpuMsPerList`: each process's CPU per list of the sequential requests (one list alone). */
  figures: Partial<Record<Target, { responses: TimedResponse[], peakRssMb: Record<string, number>, cpuMsPerList: Record<string, number> }>>
  /** One list alone: baseline mean total time over the service's (sequential requests); like the other ratios, 1 is the limit. */
  ratio?: number
  checks: { completes?: boolean, rss?: boolean, firstByte?: boolean, ratio?: boolean }
  error?: string
}

export type ScenarioResult = LoadResult | MemoryResult

export interface BenchReport {
  date: string
  machine: Machine
  build: { cli: string, gitCommit: string, srcModified: boolean }
  settings: { stores: string[], connections: number, generator: string, rounds: number, roundS: number, warmupS: number, settleS?: number, smoke: boolean, cpuProf: boolean, workers: string, overrides?: Record<string, string>, rss: string }
  results: ScenarioResult[]
  /** What did not work: a process that did not start, a scenario without its expected answers. */
  problems: string[]
  /** Figures that may not compare like with like (bodies that differ from the baseline's). */
  warnings: string[]
}

/**
 * `home`: the scenario ran on its own dataset. Elsewhere (`detail` on the search dataset, as what
 * search is measured against) its figures are a reference: its targets are those of its dataset.
 */
export function checkLoad (result: LoadResult, home: boolean): void {
  const { service, baseline } = result.figures
  if (service === undefined || baseline === undefined) return
  const scenario = scenarioOf(result.scenario)
  result.ratio = baseline.requestsPerSecond > 0 ? service.requestsPerSecond / baseline.requestsPerSecond : 0
  const peer = result.figures.peer
  if (peer !== undefined && peer.requestsPerSecond > 0) result.peerRatio = service.requestsPerSecond / peer.requestsPerSecond
  if (!home) return
  const minRatio = scenario.minRatio?.[result.store]
  if (minRatio !== undefined) result.checks.ratio = result.ratio >= minRatio
  if (scenario.minPeerRatio !== undefined) result.checks.peer = (result.peerRatio ?? 0) >= scenario.minPeerRatio
  if (scenario.maxP99Ms !== undefined) result.checks.p99 = service.p99Ms <= scenario.maxP99Ms
}

/** `result`'s service figures as ratios to `plain`'s (the scenario it extends, on the same processes). */
export function checkVersus (result: LoadResult, plain: LoadResult): void {
  const service = result.figures.service
  const base = plain.figures.service
  result.versus = { scenario: plain.scenario }
  if (service === undefined || base === undefined) return
  const cpu = serviceCpuPerRequest(service)
  const baseCpu = serviceCpuPerRequest(base)
  if (base.requestsPerSecond > 0) result.versus.requestsRatio = service.requestsPerSecond / base.requestsPerSecond
  if (cpu !== undefined && baseCpu !== undefined && baseCpu > 0) result.versus.cpuRatio = cpu / baseCpu
  if (base.bytesPerAnswer > 0) result.versus.bytesRatio = service.bytesPerAnswer / base.bytesPerAnswer
  const maxCostRatio = scenarioOf(result.scenario).maxCostRatio
  if (maxCostRatio !== undefined && result.versus.cpuRatio !== undefined) result.checks.cost = result.versus.cpuRatio <= maxCostRatio
  const maxP99Ms = scenarioOf(result.scenario).maxP99Ms
  if (maxP99Ms !== undefined) result.checks.p99 = service.p99Ms <= maxP99Ms
}

/**
 * `result`'s `minShareOf` target: its req/s over the baseline's in `here` (that scenario on the
 * same processes), against `home`'s ratio (that scenario on its own dataset).
 */
export function checkShare (result: LoadResult, here: LoadResult, home: LoadResult | undefined): void {
  const { minShareOf } = scenarioOf(result.scenario)
  const service = result.figures.service
  const base = here.figures.baseline
  result.share = { scenario: here.scenario, of: home?.ratio }
  if (minShareOf === undefined || service === undefined || base === undefined || base.requestsPerSecond <= 0) return
  result.share.ratio = service.requestsPerSecond / base.requestsPerSecond
  if (result.share.of !== undefined) result.checks.share = result.share.ratio >= minShareOf.share * result.share.of
}

export function checkMemory (result: MemoryResult): void {
  const { service, baseline } = result.figures
  if (service === undefined || baseline === undefined) return
  const mean = (responses: TimedResponse[]): number => responses.reduce((sum, r) => sum + r.totalMs, 0) / responses.length
  const fullSize = Math.max(...baseline.responses.map((r) => r.bytes))
  result.checks.completes = service.responses.every((r) => r.status === 200 && r.error === undefined && r.bytes === fullSize)
  // Failed answers are quick: a ratio of times means something only when every list was whole.
  // The sequential requests time one list alone; the concurrent ones, memory under load.
  const alone = (responses: TimedResponse[]): TimedResponse[] => responses.slice(0, MEMORY_RUN.sequential)
  if (result.checks.completes) result.ratio = mean(alone(baseline.responses)) / mean(alone(service.responses))
  const minRatio = scenarioOf(result.scenario).minRatio?.[result.store]
  if (result.ratio !== undefined && minRatio !== undefined) result.checks.ratio = result.ratio >= minRatio
  result.checks.rss = Object.values(service.peakRssMb).every((mb) => mb <= MEMORY_RUN.maxRssMb)
  result.checks.firstByte = service.responses.every((r) => r.firstByteMs < MEMORY_RUN.maxFirstByteMs)
}

const mark = (pass: boolean | undefined): string => pass === undefined ? '' : pass ? '✅' : '❌'
/** Rounded down, so that a ratio shown as 0.30 has passed a 0.30 target. */
const ratio = (value: number | undefined): string => value === undefined ? '–' : (Math.floor(value * 100) / 100).toFixed(2)
const whole = (n: number): string => Math.round(n).toLocaleString('en-US')
/** A row for a scenario that has no figures: its message, then empty cells up to `columns`. */
const errorRow = (cells: Array<string | number>, message: string, columns: number): string =>
  `| ${[...cells, message].join(' | ')} |${' |'.repeat(columns - cells.length - 1)}`
/** Each named process's figure, rounded, in that order. */
const perProcess = (figures: Record<string, number> | undefined, names: string[]): string =>
  names.map((name) => figures?.[name] === undefined ? '–' : whole(figures[name])).join(' / ')

/** The load generator used most of its cores: that side's req/s is bounded by the client, not the server. */
const LOAD_BOUND_CPU = 0.9

function requestsPerSecond (f: LoadFigures & Usage): string {
  return whole(f.requestsPerSecond) + (f.generatorCpuMs >= LOAD_BOUND_CPU * f.generatorCores * f.wallMs ? ' ‡' : '')
}

/** CPU µs per response of one process, or undefined when it is not in the figures. */
function cpuPerRequest (f: LoadFigures & Usage, name: string): number | undefined {
  const ms = f.cpuMs[name]
  return ms === undefined || f.requests === 0 ? undefined : 1000 * ms / f.requests
}

/** CPU µs per response of the service (front + post API), or undefined without figures. */
function serviceCpuPerRequest (f: LoadFigures & Usage): number | undefined {
  const front = cpuPerRequest(f, 'front')
  const api = cpuPerRequest(f, 'posts-api')
  return front === undefined && api === undefined ? undefined : (front ?? 0) + (api ?? 0)
}

const micros = (us: number | undefined): string => us === undefined ? '–' : us < 100 ? us.toFixed(1) : whole(us)

/** The dataset of a load, when it is not the plain posts. */
const postsOf = (r: LoadResult): string => r.dataset === 'posts' ? String(r.posts) : `${r.posts} (${r.dataset})`

function loadRow (r: LoadResult): string {
  const { service: s, baseline: b } = r.figures
  const scenario = scenarioOf(r.scenario)
  if (s === undefined || b === undefined) return errorRow([r.store, r.scenario, postsOf(r)], r.error ?? 'not run', 15)
  // Targets not checked (a scenario on another dataset than its own) are not shown.
  const minRatio = r.checks.ratio === undefined ? undefined : scenario.minRatio?.[r.store]
  const peer = r.figures.peer
  const targets = [
    ...(minRatio === undefined ? [] : [`≥ ${minRatio.toFixed(2)} ${mark(r.checks.ratio)}`]),
    ...(scenario.minPeerRatio === undefined || peer === undefined
      ? []
      : [`≥ ${scenario.minPeerRatio.toFixed(2)} × the Fastify peer's req/s: ${ratio(r.peerRatio)} (peer ${whole(peer.requestsPerSecond)} req/s, ` +
          `${micros(cpuPerRequest(peer, 'peer'))} CPU µs/req) ${mark(r.checks.peer)}`])
  ]
  const target = targets.join('; ') || '–'
  const p99 = scenario.maxP99Ms === undefined || r.checks.p99 === undefined ? '–' : `≤ ${scenario.maxP99Ms} ${mark(r.checks.p99)}`
  const front = cpuPerRequest(s, 'front')
  const api = cpuPerRequest(s, 'posts-api')
  const service = (front ?? 0) + (api ?? 0)
  const base = cpuPerRequest(b, 'baseline')
  const ms = (value: number): string => value < 10 ? value.toFixed(1) : whole(value)
  return `| ${r.store} | ${r.scenario} | ${postsOf(r)} | ${requestsPerSecond(s)} | ${requestsPerSecond(b)} | ` +
    `**${ratio(r.ratio)}**${r.generator === 'wrk' ? '' : ' †'} | ${target} | ${ms(s.p50Ms)} / ${ms(s.p99Ms)} | ${ms(b.p50Ms)} / ${ms(b.p99Ms)} | ${p99} | ` +
    `${micros(front)} + ${micros(api)} = ${micros(service)} | ${micros(base)} | ${base === undefined || service === 0 ? '–' : (base / service).toFixed(2)} | ` +
    `${s.unexpected} / ${b.unexpected} | ${perProcess({ ...s.peakRssMb, ...b.peakRssMb }, ['posts-api', 'front', 'baseline'])} |`
}

function versusRow (r: LoadResult): string {
  const s = r.figures.service
  const scenario = scenarioOf(r.scenario)
  if (s === undefined) return errorRow([r.store, r.scenario, postsOf(r)], r.error ?? 'not run', 13)
  const ms = (value: number): string => value < 10 ? value.toFixed(1) : whole(value)
  const times = (value: number | undefined): string => value === undefined ? '–' : `${value.toFixed(2)}×`
  const share = scenario.minShareOf === undefined
    ? []
    : [`ratio ≥ ${scenario.minShareOf.share.toFixed(2)} × ${scenario.minShareOf.scenario}'s (${ratio(r.share?.ratio)} against ${ratio(r.share?.of)}) ${mark(r.checks.share)}`]
  const cost = scenario.maxCostRatio === undefined ? [] : [`≤ ${scenario.maxCostRatio.toFixed(2)}× ${mark(r.checks.cost)}`]
  const target = [...cost, ...share].join(', ') || '–'
  return `| ${r.store} | ${r.scenario} | ${postsOf(r)} | ${requestsPerSecond(s)} | ${ms(s.p50Ms)} / ${ms(s.p99Ms)} | ` +
    `${micros(cpuPerRequest(s, 'front'))} + ${micros(cpuPerRequest(s, 'posts-api'))} = ${micros(serviceCpuPerRequest(s))} | ${(s.bytesPerAnswer / 1024).toFixed(1)} | ` +
    `${r.versus?.scenario ?? '–'} | ${times(r.versus?.requestsRatio)} | **${times(r.versus?.cpuRatio)}** | ${times(r.versus?.bytesRatio)} | ${target} | ${s.unexpected} |`
}

function memoryRow (r: MemoryResult): string {
  const { service: s, baseline: b } = r.figures
  if (s === undefined || b === undefined) return errorRow([r.store], r.error ?? 'not run', 13)
  const each = (responses: TimedResponse[], key: 'firstByteMs' | 'totalMs'): string => responses.map((x) => whole(x[key])).join(', ')
  const statuses = [...new Set(s.responses.map((x) => x.error === undefined ? String(x.status) : `error (${x.error})`))].join(', ')
  return `| ${r.store} | ${statuses} | ${each(s.responses, 'firstByteMs')} | ${each(b.responses, 'firstByteMs')} | ` +
    `${each(s.responses, 'totalMs')} | ${each(b.responses, 'totalMs')} | ${(Math.max(...b.responses.map((x) => x.bytes)) / 1e6).toFixed(0)} | ` +
    `**${ratio(r.ratio)}** ${mark(r.checks.ratio)} | ${perProcess({ ...s.cpuMsPerList, ...b.cpuMsPerList }, ['posts-api', 'front', 'baseline'])} | ` +
    `${perProcess({ ...s.peakRssMb, ...b.peakRssMb }, ['posts-api', 'front', 'baseline'])} | ` +
    `${mark(r.checks.completes)} | ${mark(r.checks.rss)} | ${mark(r.checks.firstByte)} |`
}

export function renderMarkdown (report: BenchReport): string {
  const { machine, build, settings } = report
  const loads = report.results.filter((r): r is LoadResult => r.kind === 'load' && baselineServes(r.scenario))
  const versus = report.results.filter((r): r is LoadResult => r.kind === 'load' && !baselineServes(r.scenario))
  const memory = report.results.filter((r): r is MemoryResult => r.kind === 'memory')
  const lines = [
    `# Blog Read API benchmark, ${report.date}`, '',
    `- Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}${machine.stealPercent === undefined ? '' : `; ${machine.stealPercent.toFixed(1)} % of its CPU time stolen by the hypervisor during the run`}`,
    `- Build: \`${build.cli}\` (git ${build.gitCommit}${build.srcModified ? ', src/ modified' : ''})`,
    `- Settings: stores ${settings.stores.join(', ')}; load from ${settings.generator}; ${settings.connections} connections; ` +
      `${(settings.settleS ?? 0) > 0 ? `${settings.settleS ?? 0} s of load on each server of a phase before its first scenario; ` : ''}per scenario, ${settings.warmupS} s of ` +
      `warm-up on each server, then ${settings.rounds} round${settings.rounds === 1 ? '' : 's'} of ${settings.roundS} s alternating baseline and service` +
      `${settings.smoke ? '; smoke' : ''}${settings.cpuProf ? '; --cpu-prof' : ''}; WORKERS ${settings.workers} per tier` +
      `${settings.workers === '1' ? '' : ' (CPU and RSS of a tier: its primary and workers together)'}` +
      Object.entries(settings.overrides ?? {}).map(([name, value]) => `; ${name}=${value}`).join(''),
    `- Peak RSS: ${settings.rss}`,
    '- Ratio: service requests/s ÷ baseline requests/s (†: measured with autocannon, which saturates first on 2 cores: ratios lean toward 1). ' +
      'Latencies in ms (request-weighted means of the rounds\' percentiles). CPU µs/req: CPU time (user + system) of each server process per response: ' +
      'front + post API = service; CPU ratio: baseline µs ÷ service µs. Unexpected: other statuses, errors and timeouts. ' +
      'The service runs with its defaults: access logs at info (to a file), metrics on.',
    `- ‡: the load generator used over ${LOAD_BOUND_CPU * 100} % of its cores during those runs, so they measure the client as much as the server.`, ''
  ]
  if (loads.length > 0) {
    lines.push('| store | scenario | posts | service req/s | baseline req/s | ratio | target | service p50 / p99 | baseline p50 / p99 | p99 target (ms) | ' +
      'CPU µs/req front + post API = service | CPU µs/req baseline | CPU ratio | unexpected svc / base | peak RSS MB api / front / base |',
    '|---|---|--:|--:|--:|--:|---|--:|--:|---|--:|--:|--:|--:|--:|', ...loads.map(loadRow), '')
  }
  if (versus.length > 0) {
    lines.push('### Routes the baseline does not serve (the service alone, against the read each extends in the same processes)', '',
      'Ratios: this scenario\'s service req/s, CPU µs per request and bytes per answer (head and body, as the load generator read them) ' +
      'over those of the scenario in `against`. An answer larger than the one it is measured against also costs more to send.', '',
      '| store | scenario | posts | service req/s | p50 / p99 | CPU µs/req front + post API = service | KB per answer | against | req/s ratio | CPU ratio | bytes ratio | target | unexpected |',
      '|---|---|--:|--:|--:|--:|--:|---|--:|--:|--:|---|--:|', ...versus.map(versusRow), '')
  }
  if (memory.length > 0) {
    lines.push(`### list-100000 (memory run: ${MEMORY_RUN.sequential} sequential requests, then ${MEMORY_RUN.concurrent} at once)`, '',
      'Times in ms for each response; ratio: baseline mean total time ÷ service mean total time of the sequential requests (one list alone).', '',
      '| store | service statuses | service first byte | baseline first byte | service total | baseline total | MB | ratio | CPU ms per list alone api / front / base | peak RSS MB api / front / base | completes | RSS ≤ 200 MB | first byte < 1 s |',
      '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|', ...memory.map(memoryRow), '')
  }
  if (report.problems.length > 0) lines.push('**Problems**', '', ...report.problems.map((p) => `- ${p}`), '')
  if (report.warnings.length > 0) lines.push('**Warnings**', '', ...report.warnings.map((w) => `- ${w}`), '')
  return lines.join('\n')
}

/** What did not work (never a figure): a scenario without its expected answers, or with others. */
export function problemsOf (report: BenchReport): string[] {
  return report.results.flatMap((r) => {
    const where = `${r.store}, ${r.scenario}`
    if (r.error !== undefined) return [`${where}: ${r.error}`]
    return [...TARGETS, 'peer' as const].flatMap((target) => {
      if (r.kind === 'memory') {
        const bad = (r.figures[target]?.responses ?? []).filter((x) => x.status !== 200 || x.error !== undefined)
        return bad.length === 0 ? [] : [`${where}, ${target}: ${bad.length} answers not 200 (${bad.map((x) => x.error ?? x.status).join(', ')})`]
      }
      const figures = r.figures[target]
      if (figures === undefined) return []
      const statuses = figures.statuses === undefined
        ? `${figures.requests - figures.expected} with a status of 400 or more`
        : Object.entries(figures.statuses).map(([code, n]) => `${n}× ${code}`).join(', ')
      if (figures.expected === 0) return [`${where}, ${target}: no ${scenarioOf(r.scenario).expectedStatus} answer (${statuses || 'no answer'}, ${figures.errors} errors)`]
      if (figures.unexpected > 0) return [`${where}, ${target}: ${figures.unexpected} unexpected (${statuses}; ${figures.errors} errors, ${figures.timeouts} timeouts)`]
      return []
    })
  })
}

/** Writes `<date>.json` and `<date>.md`, and the same as latest.json / latest.md; returns the Markdown file. */
export function writeReport (report: BenchReport, markdown: string): string {
  mkdirSync(RESULTS_DIR, { recursive: true })
  const stamp = report.date.replace(/[:.]/g, '-')
  const json = JSON.stringify(report, null, 2) + '\n'
  for (const name of [stamp, 'latest']) {
    writeFileSync(join(RESULTS_DIR, `${name}.json`), json)
    writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown)
  }
  return join(RESULTS_DIR, `${stamp}.md`)
}
