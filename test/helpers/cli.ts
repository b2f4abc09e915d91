// Runs the built `blog-read-api` executable as a user would (dist/, checked fresh: built.ts), or
// its command line in this process (runCliHere), where a spawn would only cost time.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { runCli as runCommandLine } from '../../src/cli/main.js'
import { SETTINGS } from '../../src/settings.js'
import { assertBuilt, DIST } from './built.js'
import { NO_LOAD_SHEDDING } from './config.js'

export const CLI = join(DIST, 'cli.js')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ['DATABASE_URL', 'API_URL', 'HOST', 'BLOG_PORT', 'POSTS_PORT', 'UPSTREAM_TIMEOUT_MS', 'LOG_LEVEL', 'SLUG_PATTERN', 'WORKERS']) delete env[name]
  return { ...env, ...NO_LOAD_SHEDDING }
}

/**
 * The environment of an executable a test starts with only `settings`: none of the service's
 * settings inherited from the test run's, access lines at info (for tests that read them), and
 * no load shedding unless `settings` asks for it.
 */
export function settingsOnlyEnv (settings: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !(name in SETTINGS)))
  return { ...inherited, LOG_LEVEL: 'info', ...NO_LOAD_SHEDDING, ...settings }
}

/** A stream that keeps what is written to it. */
function collector (): { stream: Writable, text: () => string } {
  let text = ''
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    }
  })
  return { stream, text: () => text }
}

/**
 * Runs a command line in this process, as the executable runs it (parsing, settings, the
 * command), with `env` as its whole environment; for what ends (mistakes, failed starts,
 * migrate, help), never a serving command that starts, which would stay in this process.
 */
export async function runCliHere (args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult & { log: string }> {
  const [stdout, stderr, log] = [collector(), collector(), collector()]
  const code = await runCommandLine(args, { env, stdout: stdout.stream, stderr: stderr.stream, logDestination: log.stream })
  return { code, stdout: stdout.text(), stderr: stderr.text(), log: log.text() }
}

/** Runs a command to its end (at most 10 s). */
export async function runCli (args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
  assertBuilt()
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...baseEnv(), ...env }, cwd, timeout: 10_000 })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'close') as [number | null]
  return { code, stdout, stderr }
}

export interface RunningCli {
  child: ChildProcess
  /** Base URLs from the "listening at" log lines, by tier. */
  urls: { front?: string, posts?: string }
  stop: () => Promise<number | null>
}

/** Starts a serving command and waits until it logged the listening lines it should. */
export async function startCli (args: string[], env: NodeJS.ProcessEnv, expect: Array<'front' | 'posts'>, cwd?: string): Promise<RunningCli> {
  assertBuilt()
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...baseEnv(), ...env }, cwd })
  // A test cut short (its time-out, then the runner's forced exit) must not leave a server
  // behind, holding its port.
  const killOnExit = (): void => { child.kill('SIGKILL') }
  process.once('exit', killOnExit)
  const urls: RunningCli['urls'] = {}
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening after 10 s: ${output}`)), 10_000)
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)))
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      for (const match of output.matchAll(/(front|post) API listening at (http:\/\/[^ ]+)/g)) {
        urls[match[1] === 'front' ? 'front' : 'posts'] = match[2]
      }
      if (expect.every((tier) => urls[tier] !== undefined)) {
        clearTimeout(timer)
        // Stop collecting (a process under load logs a line per request); the output still flows.
        child.stdout?.off('data', onData)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
  })
  child.removeAllListeners('exit')
  child.once('exit', () => process.off('exit', killOnExit))
  return {
    child,
    urls,
    stop: async () => {
      // Already gone (crashed, or stopped by the test): nothing to wait for.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const [code] = await once(child, 'exit') as [number | null]
      return code
    }
  }
}

/** Starts several serving commands at once (each `startCli`'s arguments); if one fails, stops the others and throws. */
export async function startClis (...commands: Array<Parameters<typeof startCli>>): Promise<RunningCli[]> {
  const started = await Promise.allSettled(commands.map(async (args) => await startCli(...args)))
  const failed = started.find((result) => result.status === 'rejected')
  const running = started.flatMap((result) => result.status === 'fulfilled' ? [result.value] : [])
  if (failed === undefined) return running
  await Promise.all(running.map(async (cli) => await cli.stop()))
  throw failed.reason
}
