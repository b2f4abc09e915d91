// The benchmark's command line (`npm run bench -- --help` style flags, see bench/README.md) and
// the environment of the processes it measures.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_POSTGRES_URL } from './dataset.js'
import { DEFAULT_MYSQL_URL } from './mysql-dataset.js'
import { SCENARIO_NAMES, type ScenarioName, type Store } from './scenarios.js'

export const STORES = ['sqlite', 'postgres', 'mysql'] as const satisfies readonly Store[]
/** A full run's stores: MySQL/MariaDB only when asked for (`--store mysql`), as it has no targets. */
const DEFAULT_STORES: readonly Store[] = ['sqlite', 'postgres']
export const HOST = '127.0.0.1'
/** The front's SITE_URL, which serves the feeds. */
export const SITE_URL = 'https://blog.example'

export interface Options {
  stores: Store[]
  scenarios: Set<ScenarioName>
  connections: number
  /** wrk's threads. */
  threads: number
  /** Measured runs per scenario and server, `roundS` seconds each (about --duration in all). */
  rounds: number
  roundS: number
  warmupS: number
  /**
   * Seconds of load on each target of a phase before its first measured scenario, on top of that
   * scenario's warm-up: the processes are new, and V8 goes on compiling a server's code for tens
   * of seconds of load, the service's far more than the baseline's (bench/README.md).
   */
  settleS: number
  smoke: boolean
  cpuProf: boolean
  /** WORKERS of each tier (node:cluster processes; 1: none). */
  workers: string
  cli: string
  postgresUrl: string
  mysqlUrl: string
  /** Service settings given with --set (NAME=VALUE), on top of the defaults. */
  overrides: Record<string, string>
  serviceEnv: (settings: Record<string, string>) => NodeJS.ProcessEnv
}

export function parseOptions (argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      store: { type: 'string' },
      scenario: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      settle: { type: 'string' },
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
    stores: list(values.store ?? (smoke ? 'sqlite' : DEFAULT_STORES.join(',')), STORES, 'store'),
    scenarios: new Set(values.scenario === undefined ? SCENARIO_NAMES : scenarioList(values.scenario)),
    connections: number(values.connections, 50, 'connections', 1),
    threads: Math.round(number(values.threads, 1, 'threads', 1)),
    rounds,
    // wrk and autocannon both run whole seconds.
    roundS: Math.max(1, Math.round(durationS / rounds)),
    warmupS: number(values.warmup, smoke ? 0 : 2, 'warmup', 0),
    settleS: number(values.settle, smoke ? 0 : 20, 'settle', 0),
    smoke,
    cpuProf: values['cpu-prof'] === true,
    workers,
    cli,
    postgresUrl: process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL,
    mysqlUrl: process.env.BENCH_MYSQL_URL ?? DEFAULT_MYSQL_URL,
    overrides,
    serviceEnv: createServiceEnv(cli, overrides)
  }
}

/**
 * `--scenario`'s comma list. A name may hold commas itself (`list?limit=20&fields=slug,title,…`
 * names its request), so each item is the longest scenario name the list goes on with.
 */
function scenarioList (value: string): ScenarioName[] {
  const longestFirst = [...SCENARIO_NAMES].sort((a, b) => b.length - a.length)
  const names: ScenarioName[] = []
  for (let rest = value; rest !== '';) {
    const name = longestFirst.find((candidate) => rest === candidate || rest.startsWith(`${candidate},`))
    if (name === undefined) throw new Error(`--scenario ${rest.split(',')[0]}: expected one of ${SCENARIO_NAMES.join(', ')}`)
    names.push(name)
    rest = rest.slice(name.length + 1)
  }
  return names
}

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
