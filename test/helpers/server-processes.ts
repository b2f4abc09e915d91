// Server programs a test starts and stops itself (PgBouncer, a PostgreSQL replica), with their
// files in a temporary folder. PostgreSQL and PgBouncer refuse to run as root: under root (CI),
// they run as the `postgres` system user, which owns that folder. And what a test checks is left
// of processes it started: whether one lives, what runs below it, whether a port still listens;
// and an npm script run as a supervisor runs it, stopped by a signal to npm.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from '../../scripts/dist-freshness.js'

/** Why a suite that needs programs outside Node cannot run, and what turns it on (`what`): it fails in CI, and skips, saying so, elsewhere. */
export function missing (what: string): string | false {
  if (process.env.CI === 'true') return false
  return what
}

/** Whether a process with this pid still exists (signal 0 only checks). */
export function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** The command line of a process (its arguments, space-separated); '' once it has gone. */
export function commandLine (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

/** Each process's parent, by pid (Linux: from /proc). */
function parents (): Map<number, number> {
  const parentOf = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // Field 4 of stat is the parent's pid; the command name (field 2) may hold spaces, so count after its ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // Ended while we read.
    }
  }
  return parentOf
}

/** The processes `pid` started itself. */
export function childrenOf (pid: number): number[] {
  return [...parents()].filter(([, ppid]) => ppid === pid).map(([child]) => child)
}

/** Every process below `pid`, through any depth. */
export function descendantsOf (pid: number): number[] {
  const parentOf = [...parents()]
  const below = (parent: number): number[] => parentOf.filter(([, ppid]) => ppid === parent).flatMap(([child]) => [child, ...below(child)])
  return below(pid)
}

/** Whether a connection to `port` on 127.0.0.1 is refused: nothing listens there. */
export async function portRefused (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'))
  })
}

/** The first of `candidates` that exists and is executable. */
export function findExecutable (candidates: string[]): string | undefined {
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

export interface NpmScript {
  pid: number
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string
  /** Resolves once its stdout matches `ready`; rejects when npm ends first. */
  served: (ready: RegExp) => Promise<void>
  /**
   * Sends `signal` to npm, then checks that everything stopped by itself: npm exits 0 within
   * `guardMs` (a guard, so that a script that ignores the signal fails rather than hanging the
   * suite: not a measure of speed), and neither npm, nor a process of `below`, nor a listener
   * on one of `ports` is left.
   */
  assertStopsOn: (signal: NodeJS.Signals, left: { guardMs: number, below: number[], ports: number[] }) => Promise<void>
  /** Kills npm and `below` outright: only a test that failed leaves any. */
  kill: (below: number[]) => void
}

/** `npm run --silent SCRIPT` in the repository, as a supervisor runs it, with `env` added. */
export function startNpmScript (script: string, env: NodeJS.ProcessEnv): NpmScript {
  const npm = spawn('npm', ['run', '--silent', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  npm.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  npm.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const pid = npm.pid ?? 0
  return {
    pid,
    output: () => output,
    served: async (ready) => {
      await new Promise<void>((resolve, reject) => {
        const check = (): void => { if (ready.test(output)) resolve() }
        npm.stdout.on('data', check)
        exited.then(() => reject(new Error(`npm ended before serving: ${output}`)), reject)
      })
    },
    async assertStopsOn (signal, { guardMs, below, ports }) {
      npm.kill(signal)
      const guard = new AbortController()
      const [code, killedBy] = await Promise.race([exited, sleep(guardMs, undefined, { signal: guard.signal }).then(() => {
        throw new Error(`npm was still running ${guardMs} ms after ${signal}: ${output}`)
      })]).finally(() => guard.abort())
      assert.deepEqual({ code, killedBy }, { code: 0, killedBy: null }, output)
      assert.equal(alive(pid), false, 'npm has gone')
      assert.deepEqual(below.filter(alive).map(commandLine), [], 'no process it started is left')
      for (const port of ports) assert.ok(await portRefused(port), `port ${port} is free`)
    },
    kill (below) {
      npm.kill('SIGKILL')
      for (const child of below.filter(alive)) process.kill(child, 'SIGKILL')
    }
  }
}

interface Account { uid: number, gid: number }

/** Under root, the `postgres` user's ids; otherwise undefined (run as ourselves). */
function serverAccount (): Account | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'))
  const [, , uid, gid] = line?.split(':') ?? []
  if (uid === undefined || gid === undefined) throw new Error('running as root, and there is no `postgres` user to run the servers as')
  return { uid: Number(uid), gid: Number(gid) }
}

/** A fresh temporary folder the servers may write to; removed by `remove`. */
export function serverFolder (prefix: string): { path: string, remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  const account = serverAccount()
  if (account !== undefined) chownSync(path, account.uid, account.gid)
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

export interface ServerProcess {
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string
  /** Stops it with `signal`, then SIGKILL if it has not exited within 10 s. */
  stop: () => Promise<void>
}

/**
 * Starts `command` as the server account and resolves once `ready` does (polled every 100 ms,
 * for at most `withinMs`); rejects with its output when it exits first or never gets ready.
 */
export async function startServer (command: string, args: string[], { stopSignal, ready, withinMs = 20_000 }: {
  stopSignal: NodeJS.Signals
  ready: () => Promise<boolean>
  withinMs?: number
}): Promise<ServerProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...serverAccount() })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  let alive = true
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => { alive = false; resolve() })
    child.once('error', (err) => { output += String(err); alive = false; resolve() })
  })
  // If the test process dies first, the server must not outlive it.
  const killOnExit = (): void => { child.kill('SIGKILL') }
  process.once('exit', killOnExit)
  const server: ServerProcess = {
    output: () => output,
    stop: async () => {
      process.off('exit', killOnExit)
      await stopChild(child, exited, stopSignal)
    }
  }
  const deadline = Date.now() + withinMs
  for (;;) {
    if (await ready().catch(() => false)) return server
    if (!alive || Date.now() > deadline) {
      await server.stop()
      throw new Error(`${command} ${alive ? `was not ready within ${withinMs} ms` : 'exited'}:\n${output}`)
    }
    await sleep(100)
  }
}

async function stopChild (child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill(signal)
  const killed = await Promise.race([exited.then(() => false), sleep(10_000).then(() => true)])
  if (killed) {
    child.kill('SIGKILL')
    await exited
  }
}

/** Runs `command` to completion as the server account, with `env` added; rejects with its output when it fails. */
export async function runAsServer (command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env }, ...serverAccount() })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', resolve)
  })
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`)
}
