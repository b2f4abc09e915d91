// The machine a run is taken on, and how much of its CPU time the hypervisor gave to other guests
// meanwhile (Linux's steal time): one sign that the host was busy, which lowers a run's
// requests/s and raises its latencies, but hardly the ratios of its alternated rounds. Not the
// only sign: a guest sharing caches and memory with busy ones runs slower without any steal.
import { readFileSync } from 'node:fs'
import { cpus, release, totalmem, type } from 'node:os'

export interface Machine {
  cpus: number
  cpuModel: string
  memoryGb: number
  os: string
  node: string
  /** The share of the machine's CPU time stolen during the run, in percent (Linux only). */
  stealPercent?: number
}

/** The machine's CPU time so far, in clock ticks: all of it, and what was stolen. */
export interface CpuTicks {
  total: number
  steal: number
}

/**
 * The machine's CPU time from the first line of /proc/stat (`cpu  user nice system idle iowait
 * irq softirq steal guest guest_nice`), or undefined when the text has none. Guest time is
 * already counted in user and nice, so it is left out.
 */
export function cpuTicksOf (procStat: string): CpuTicks | undefined {
  const fields = /^cpu\s+(.*)$/m.exec(procStat)?.[1]?.trim().split(/\s+/).slice(0, 8).map(Number)
  if (fields === undefined || fields.length < 4 || fields.some((n) => !Number.isSafeInteger(n) || n < 0)) return undefined
  const steal = fields[7] ?? 0
  return { total: fields.reduce((sum, n) => sum + n, 0), steal }
}

/** The machine's CPU time now; undefined where there is no /proc/stat. */
export function cpuTicks (): CpuTicks | undefined {
  try {
    return cpuTicksOf(readFileSync('/proc/stat', 'utf8'))
  } catch {
    return undefined
  }
}

/** The share of the CPU time between `from` and `to` that was stolen, in percent; undefined without both, or without time between them. */
export function stealPercent (from: CpuTicks | undefined, to: CpuTicks | undefined): number | undefined {
  if (from === undefined || to === undefined || to.total <= from.total) return undefined
  return 100 * (to.steal - from.steal) / (to.total - from.total)
}

/** What the report says of this machine (the steal is added when the run ends). */
export function thisMachine (): Machine {
  const cores = cpus()
  return { cpus: cores.length, cpuModel: cores[0]?.model.trim() ?? 'unknown', memoryGb: Math.round(totalmem() / 1e9), os: `${type()} ${release()}`, node: process.version }
}
