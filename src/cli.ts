#!/usr/bin/env node
// The `blog-read-api` executable: parses the command and flags, loads the config, and hands
// the command to the lifecycle (serving), the store (migrate, seed) or the importer (import).
// A user's mistake (bad setting, missing table, unreachable database) is one line and exit ≠ 0.
import { mkdirSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { pino, type Logger } from 'pino'
import { ConfigError, describeStore, loadConfig, type Config } from './config.js'
import { flagName, SETTINGS, type SettingName } from './settings.js'
import { reportStartFailure, WorkerStartError, workerId } from './process/cluster.js'
import { createLogOutput } from './process/log-output.js'
import { runImport } from './import/import-command.js'
import { serve, storeOptions } from './process/lifecycle.js'
import { openStore } from './store/open-store.js'

const COMMANDS = {
  serve: 'both tiers in one process (the default): the post API, then the front API calling it',
  front: 'the front API alone (needs API_URL)',
  'posts-api': 'the upstream post API alone',
  migrate: 'create the default `posts` table in DATABASE_URL when it is absent',
  seed: 'insert the sample posts that are not there yet',
  import: 'import Markdown files with YAML front matter into `posts` (files or folders; --dry-run writes nothing)'
} as const
type Command = keyof typeof COMMANDS

const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[]

/** A mistake of the person starting the process: printed as one line, exit code 2. */
class UsageError extends Error {}

function usage (): string {
  const commands = Object.entries(COMMANDS).map(([name, help]) => `  ${name.padEnd(10)} ${help}`)
  const settings = SETTING_NAMES.map((name) => {
    const setting = SETTINGS[name]
    const fallback = setting.default === undefined ? '' : ` (default: ${setting.default})`
    return `  --${flagName(name).padEnd(20)} ${name}: ${setting.help}${fallback}`
  })
  return ['Usage: blog-read-api [command] [--flag value ...]', '       blog-read-api import <file or folder>... [--dry-run] [--flag value ...]', '', 'Commands:', ...commands, '',
    'Settings (flags override environment variables):', ...settings, ''].join('\n')
}

interface CommandLine {
  command: Command
  flags: Partial<Record<SettingName, string>>
  help: boolean
  /** `import` only: the files and folders, and --dry-run. */
  inputs: string[]
  dryRun: boolean
}

function parseCommandLine (argv: string[]): CommandLine {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        'dry-run': { type: 'boolean' },
        ...Object.fromEntries(SETTING_NAMES.map((name) => [flagName(name), { type: 'string' as const }]))
      }
    })
  } catch (err) {
    throw new UsageError((err as Error).message.split('. ')[0])
  }
  const [command = 'serve', ...extra] = parsed.positionals
  if (!(command in COMMANDS)) throw new UsageError(`unknown command "${command}" (try --help)`)
  const help = parsed.values.help === true
  const dryRun = parsed.values['dry-run'] === true
  if (command === 'import') {
    if (extra.length === 0 && !help) throw new UsageError('import needs at least one file or folder (blog-read-api import <file or folder>... [--dry-run])')
  } else {
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (try --help)`)
    if (dryRun) throw new UsageError('--dry-run applies to import only')
  }
  const flags: Partial<Record<SettingName, string>> = {}
  for (const name of SETTING_NAMES) {
    const value = (parsed.values as Record<string, unknown>)[flagName(name)]
    if (typeof value === 'string') flags[name] = value
  }
  return { command: command as Command, flags, help, inputs: command === 'import' ? extra : [], dryRun }
}

async function run (command: Command, config: Config, logger: Logger): Promise<void> {
  switch (command) {
    case 'migrate':
    case 'seed': {
      const location = config.store
      if (location.dialect === 'sqlite') mkdirSync(dirname(location.filename), { recursive: true })
      const store = await openStore(location, storeOptions(config, logger, true))
      try {
        if (command === 'migrate') {
          await store.migrate()
          logger.info(`the posts table is ready in ${describeStore(location)}`)
        } else {
          await store.checkSchema()
          logger.info(`inserted ${await store.seed()} sample posts into ${describeStore(location)}`)
        }
      } finally {
        await store.close()
      }
      return
    }
    case 'posts-api':
    case 'front':
    case 'serve':
      return await serve(command, config, logger)
  }
}

/** One line for the user: the error's message and, for wrapped errors, what caused it. */
function describeFailure (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
    const { address, port } = err as unknown as { address?: string, port?: number }
    return `cannot listen on ${address ?? ''}:${port ?? ''} (${code}): check HOST, BLOG_PORT, POSTS_PORT and ADMIN_PORT`
  }
  const cause = err.cause instanceof Error ? `: ${err.cause.message || (err.cause as NodeJS.ErrnoException).code}` : ''
  return (err.message || err.name) + cause
}

async function main (): Promise<void> {
  const { command, flags, help, inputs, dryRun } = parseCommandLine(process.argv.slice(2))
  if (help) {
    process.stdout.write(usage())
    return
  }
  const config = loadConfig(process.env, flags)
  if (command === 'import') {
    const { store, storeLimits, slugPattern } = config
    process.exitCode = await runImport({ inputs, dryRun, store, storeLimits, slugPattern, stdout: process.stdout, stderr: process.stderr })
    return
  }
  // A cluster worker's lines carry its id (pino's default base, plus `worker`).
  const worker = workerId()
  const base = worker === undefined ? undefined : { pid: process.pid, hostname: hostname(), worker }
  const logger = pino({ level: config.logLevel, name: 'blog-read-api', ...(base === undefined ? {} : { base }) }, createLogOutput(1))
  try {
    await run(command, config, logger)
  } catch (err) {
    if (err instanceof ConfigError || err instanceof WorkerStartError) throw err
    throw new Error(`cannot start (store ${describeStore(config.store)}): ${describeFailure(err)}`)
  }
}

main().catch((err: unknown) => {
  const userMistake = err instanceof ConfigError || err instanceof UsageError
  const exitCode = err instanceof WorkerStartError ? err.exitCode : userMistake ? 2 : 1
  const line = err instanceof Error ? err.message : String(err)
  // A worker's line goes to the primary, which prints one for all of them.
  if (workerId() !== undefined) reportStartFailure(line, exitCode)
  else {
    process.stderr.write(`blog-read-api: ${line}\n`)
    process.exitCode = exitCode
  }
})
