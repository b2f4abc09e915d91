// wrk (C, from Debian's `wrk` package) as the load generator of the 50-connection scenarios. On
// these 2 cores a load generator in Node (autocannon) saturates its core before the baseline
// does, squeezing every ratio toward 1; wrk sends the same load for a fraction of
// the CPU. bench/wrk/load.lua cycles through the run's requests and prints its figures.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadGenerator } from './load.js'

const SCRIPT = fileURLToPath(new URL('wrk/load.lua', import.meta.url))
const RESULT_LINE = /^WRK-RESULT (\{.*\})$/m

interface WrkResult {
  requests: number
  durationUs: number
  bytes: number
  connectErrors: number
  readErrors: number
  writeErrors: number
  statusErrors: number
  timeouts: number
  meanUs: number
  p50Us: number
  p99Us: number
  statuses: Record<string, number>
}

/** Whether wrk is installed (it prints its version, with its usage, to any unknown flag). */
export async function hasWrk (): Promise<boolean> {
  return await new Promise((resolve) => {
    execFile('wrk', ['--version'], (_err, stdout, stderr) => resolve(/^wrk /m.test(stdout + stderr)))
  })
}

/** CPU time (user + system, ms) of this process's children that have ended and been waited for: wrk's, once it has. */
function childrenCpuMs (): number {
  // stat(5): after the command's closing parenthesis come field 3 (state) onwards; cutime and cstime are fields 16 and 17.
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[13]) + Number(fields[14])) * 10 // USER_HZ is 100 on Linux
}

/**
 * A wrk load generator with `threads` threads of its own (1 leaves the most CPU to the servers
 * on 2 cores); a request slower than `timeoutS` is a timeout.
 */
export function createWrkLoad (threads: number, timeoutS: number): LoadGenerator {
  return {
    name: 'wrk',
    async run (origin, sequence, { connections, durationS, countStatuses }) {
      const dir = mkdtempSync(join(tmpdir(), 'blog-bench-wrk-'))
      try {
        const file = join(dir, 'requests.txt')
        writeFileSync(file, sequence.map(({ path, ifNoneMatch }) => ifNoneMatch === undefined ? path : `${path}\t${ifNoneMatch}`).join('\n') + '\n')
        const args = ['-t', String(threads), '-c', String(Math.max(connections, threads)), '-d', `${Math.max(1, Math.round(durationS))}s`,
          '--timeout', `${timeoutS}s`, '-s', SCRIPT, origin, '--', file, String(threads), countStatuses ? 'statuses' : 'none']
        const cpuBefore = childrenCpuMs()
        const stdout = await new Promise<string>((resolve, reject) => {
          execFile('wrk', args, { maxBuffer: 1024 * 1024 }, (err, out, stderr) => {
            if (err !== null) reject(new Error(`wrk failed: ${stderr.trim() || err.message}`))
            else resolve(out)
          })
        })
        const generatorCpuMs = childrenCpuMs() - cpuBefore
        const json = RESULT_LINE.exec(stdout)?.[1]
        if (json === undefined) throw new Error(`wrk printed no result: ${stdout.trim()}`)
        const r = JSON.parse(json) as WrkResult
        return {
          requests: r.requests,
          durationS: r.durationUs / 1e6,
          meanMs: r.meanUs / 1000,
          p50Ms: r.p50Us / 1000,
          p99Ms: r.p99Us / 1000,
          statuses: countStatuses ? r.statuses : undefined,
          statusErrors: r.statusErrors,
          errors: r.connectErrors + r.readErrors + r.writeErrors,
          timeouts: r.timeouts,
          bytes: r.bytes,
          generatorCpuMs,
          generatorCores: threads
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
