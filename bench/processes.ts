// The processes under test: started as children like in production, awaited until they answer
// HTTP, measured through /proc, and stopped with SIGTERM (so --cpu-prof profiles get written).
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'

export interface Child {
  readonly name: string
  readonly pid: number
  readonly origin: string
  /** The last lines it wrote, for error messages. */
  output (): string
  /** How it ended (`exit code 1`, `SIGKILL`) once it has; undefined while it runs. */
  exited (): string | undefined
}

const STARTUP_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000
const OUTPUT_KEEP_CHARS = 4000

/** Children run from the repository root, so `--import tsx` resolves there. */
const ROOT = fileURLToPath(new URL('..', import.meta.url))

const running = new Map<Child, ChildProcess>()

// A harness that dies must not leave servers holding ports and databases.
process.once('exit', () => {
  for (const child of running.values()) child.kill('SIGKILL')
})

/** Ports that were free a moment ago (each child binds its own right after); held together so they differ. */
export async function freePorts (count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, async () => await new Promise<Server>((resolve, reject) => {
    const server = createServer().once('error', reject).listen(0, '127.0.0.1', () => resolve(server))
  })))
  const ports = servers.map((server) => (server.address() as AddressInfo).port)
  await Promise.all(servers.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  return ports
}

/** Any HTTP answer (even 404) means the server is up. */
async function answers (origin: string): Promise<boolean> {
  try {
    const { body } = await request(`${origin}/__bench-ready`, { headersTimeout: 1000, bodyTimeout: 1000 })
    await body.dump()
    return true
  } catch {
    return false
  }
}

/**
 * Spawns `node ...args` listening at `origin`, and resolves once it answers HTTP. With `logFile`,
 * its standard output (the service's JSON log lines) is appended there, as a service's would be,
 * rather than read through a pipe by this process, which shares the machine under test.
 */
export async function startProcess (name: string, args: string[], env: NodeJS.ProcessEnv, origin: string, logFile?: string): Promise<Child> {
  const logFd = logFile === undefined ? undefined : openSync(logFile, 'a')
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', logFd ?? 'pipe', 'pipe'] })
  if (logFd !== undefined) closeSync(logFd)
  let output = logFile === undefined ? '' : `(standard output in ${logFile}) `
  const keep = (chunk: Buffer): void => { output = (output + chunk.toString()).slice(-OUTPUT_KEEP_CHARS) }
  proc.stdout?.on('data', keep)
  proc.stderr?.on('data', keep)
  let exit: string | undefined
  proc.once('close', (code, signal) => { exit = signal ?? `exit code ${code}` })
  const pid = proc.pid
  if (pid === undefined) throw new Error(`${name} did not start`)
  const child: Child = { name, pid, origin, output: () => output.trim(), exited: () => exit }
  running.set(child, proc)
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  while (!(await answers(origin))) {
    if (exit !== undefined || Date.now() > deadline) {
      await stopProcess(child)
      throw new Error(`${name} ${exit === undefined ? 'did not answer within 60 s' : `exited (${exit})`}: ${child.output() || 'no output'}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return child
}

export async function stopProcess (child: Child): Promise<void> {
  const proc = running.get(child)
  if (proc === undefined) return
  running.delete(child)
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** A process and its descendants (a tier run with WORKERS > 1 is a primary and its workers). */
function processTree (pid: number): number[] {
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number)
  } catch {}
  return [pid, ...children.flatMap(processTree)]
}

/** Resolves once the process has `count` child processes (the workers it forks), or after 60 s. */
export async function waitForChildren (pid: number, count: number): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  while (processTree(pid).length - 1 < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
}

/** A /proc/<pid>/status field in MB, summed over the process tree: VmRSS (now) or VmHWM (peak since start); 0 once it is gone. */
export function memoryMb (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let total = 0
  for (const member of processTree(pid)) {
    try {
      const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1]
      total += kb === undefined ? 0 : Number(kb) / 1024
    } catch {}
  }
  return total
}

/** CPU time (user + system) of a process tree so far, in ms; /proc counts in USER_HZ, 100 on Linux. */
export function cpuMs (pid: number): number {
  let total = 0
  for (const member of processTree(pid)) {
    try {
      const fields = readFileSync(`/proc/${member}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      total += (Number(fields[11]) + Number(fields[12])) * 10 // utime, stime: fields 14 and 15 of stat(5)
    } catch {}
  }
  return total
}

/** What spans of load cost; several spans (rounds) add up in one. */
export interface Usage {
  /** Highest VmRSS of each process, sampled every 100 ms (VmHWM only grows, so it cannot isolate a span). */
  peakRssMb: Record<string, number>
  /** CPU time of each process. */
  cpuMs: Record<string, number>
  wallMs: number
}

export const emptyUsage = (): Usage => ({ peakRssMb: {}, cpuMs: {}, wallMs: 0 })

/** Watches `children` until the returned function is called, adding to `usage`. */
export function watch (children: readonly Child[], usage: Usage): () => void {
  const sample = (): void => {
    for (const { name, pid } of children) usage.peakRssMb[name] = Math.max(usage.peakRssMb[name] ?? 0, memoryMb(pid, 'VmRSS'))
  }
  const cpuBefore = children.map((child) => cpuMs(child.pid))
  const start = performance.now()
  sample()
  const timer = setInterval(sample, 100)
  return () => {
    clearInterval(timer)
    sample()
    children.forEach((child, i) => { usage.cpuMs[child.name] = (usage.cpuMs[child.name] ?? 0) + cpuMs(child.pid) - (cpuBefore[i] ?? 0) })
    usage.wallMs += performance.now() - start
  }
}
