// `npm run bench`: the service's tiers as separate processes, and the baseline beside
// them, loaded alternately in the same run, so every figure is a ratio taken under the same
// conditions. Progress goes to stderr; the Markdown table to stdout and, with the JSON, to bench/results/.
import { execFileSync } from 'node:child_process'
import { createLoadGenerator } from './load.js'
import { cpuTicks, stealPercent, thisMachine } from './machine.js'
import { parseOptions } from './options.js'
import { problemsOf, renderMarkdown, writeReport, type BenchReport } from './report.js'
import { log, runPhase } from './runner.js'
import { planOf } from './scenarios.js'

const message = (err: unknown): string => err instanceof Error ? err.message : String(err)

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
    machine: thisMachine(),
    build: { cli: options.cli, ...gitState() },
    settings: {
      stores: options.stores,
      connections: options.connections,
      generator: load.name === 'wrk' ? `wrk, ${options.threads} thread${options.threads === 1 ? '' : 's'}` : 'autocannon (wrk is not installed: ratios lean toward 1)',
      rounds: options.rounds,
      roundS: options.roundS,
      warmupS: options.warmupS,
      settleS: options.settleS,
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
  const plan = planOf(options.scenarios, options.smoke)
  const ticksAtStart = cpuTicks()
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
  report.machine.stealPercent = stealPercent(ticksAtStart, cpuTicks())
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
