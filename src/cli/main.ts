// `blog-read-api` from its arguments to an exit code: parses the command line, answers help and
// the version, loads the settings, then imports only the running command's modules (serving
// loads the tiers; `migrate`, `import` and a mistake load none of them). A mistake (a bad flag
// or setting) or a start that fails is one line on stderr and an exit code: 2, or 1.
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import type { Writable } from 'node:stream'
import { pino, type DestinationStream, type Logger } from 'pino'
import { ConfigError, describeStore, loadConfig, type Config } from '../config.js'
import { WorkerStartError, workerId } from '../process/cluster.js'
import { createLogOutput } from '../process/log-output.js'
import { StartError } from '../process/start-error.js'
import { parseCommandLine, UsageError, type CommandLine } from './command-line.js'
import { commandHelp, generalHelp } from './help.js'

export interface CliContext {
  env: NodeJS.ProcessEnv
  stdout: Writable
  stderr: Writable & { isTTY?: boolean, columns?: number }
  /** Where the log lines go; by default standard output, buffered as log-output.ts explains. */
  logDestination?: DestinationStream
  /** Reports the line of a failed start; by default it goes to `stderr`. */
  reportFailure?: (line: string, exitCode: number) => void
}

/** The package's version, from its package.json (next to dist/ and src/ alike). */
export function version (): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

/**
 * Runs the command `argv` names, and resolves to the process's exit code; a serving command
 * resolves once it serves (0), and the process then runs until a signal closes it.
 */
export async function runCli (argv: readonly string[], context: CliContext): Promise<number> {
  try {
    const line = parseCommandLine(argv)
    switch (line.action) {
      case 'help':
        context.stdout.write(line.command === undefined ? generalHelp() : commandHelp(line.command))
        return 0
      case 'version':
        context.stdout.write(`blog-read-api ${version()}\n`)
        return 0
      case 'run':
        return await runCommand(line, loadConfig(context.env, line.flags), context)
    }
  } catch (err) {
    const { message, exitCode } = describeFailure(err)
    const report = context.reportFailure ?? ((text: string) => context.stderr.write(`blog-read-api: ${text}\n`))
    report(message, exitCode)
    return exitCode
  }
}

async function runCommand (line: Extract<CommandLine, { action: 'run' }>, config: Config, context: CliContext): Promise<number> {
  const { command } = line
  if (command === 'import') {
    const { runImport } = await import('../import/import-command.js')
    const { store, storeLimits, slugPattern } = config
    return await runImport({ inputs: line.inputs, dryRun: line.dryRun, ...(line.bodyColumn !== undefined && { bodyColumn: line.bodyColumn }), store, storeLimits, slugPattern, stdout: context.stdout, stderr: context.stderr })
  }
  if (command === 'preview-url') {
    const { printPreviewUrl } = await import('../publishing/preview-url-command.js')
    printPreviewUrl({ slug: line.inputs[0] ?? '', ttl: line.ttl, config, stdout: context.stdout, now: Date.now() })
    return 0
  }
  const logger = createLogger(config, context)
  try {
    if (command === 'migrate' || command === 'seed') {
      const { runStoreCommand } = await import('./store-commands.js')
      await runStoreCommand(command, config, logger, { search: line.search === true })
    } else {
      const { serve } = await import('../process/lifecycle.js')
      await serve(command, config, logger)
    }
    return 0
  } catch (err) {
    if (err instanceof ConfigError || err instanceof StartError || err instanceof WorkerStartError) throw err
    throw new StartError(`cannot start (store ${describeStore(config.store)}): ${describeError(err)}`, { cause: err })
  }
}

function createLogger (config: Config, context: CliContext): Logger {
  // A cluster worker's lines carry its id (pino's default base, plus `worker`).
  const worker = workerId()
  const base = worker === undefined ? undefined : { pid: process.pid, hostname: hostname(), worker }
  return pino({ level: config.logLevel, name: 'blog-read-api', ...(base === undefined ? {} : { base }) }, context.logDestination ?? createLogOutput(1))
}

/** One line for the user: the error's message and, for wrapped errors, what caused it. */
function describeError (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = err.cause instanceof Error ? `: ${err.cause.message || (err.cause as NodeJS.ErrnoException).code}` : ''
  return (err.message || err.name) + cause
}

/** The user's line and the exit code: 2 for a mistake in what they typed or set, else 1 (or a worker's). */
function describeFailure (err: unknown): { message: string, exitCode: number } {
  const message = err instanceof Error ? err.message : String(err)
  if (err instanceof UsageError || err instanceof ConfigError) return { message, exitCode: 2 }
  if (err instanceof WorkerStartError) return { message, exitCode: err.exitCode }
  return { message, exitCode: 1 }
}
