// Runs the built `blog-read-api` executable as a user would (dist/, checked fresh: built.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { assertBuilt, DIST } from './built.js'

export const CLI = join(DIST, 'cli.js')
assertBuilt()

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ['DATABASE_URL', 'API_URL', 'HOST', 'BLOG_PORT', 'POSTS_PORT', 'UPSTREAM_TIMEOUT_MS', 'LOG_LEVEL', 'SLUG_PATTERN', 'WORKERS']) delete env[name]
  return env
}

/** Runs a command to its end (at most 10 s). */
export async function runCli (args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
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
