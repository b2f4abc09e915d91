// `npm test` runs the test files in a few processes, not one process each: every process loads
// the code under coverage (a few seconds of CPU, most of a small file's cost), and the files
// share these parts' processes instead, as many parts as run at once (three): fewer processes
// load less. The parts share the files out by what each costs (file-costs.ts), so that they end
// together, and each runs its files as suites of their own, named by their paths, so a file's
// top-level hooks (before, after) stay its own: its servers start when its tests begin and close
// when they end. A file still runs alone with `node --import tsx --test test/…/file.test.ts`.
import { readdirSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { describe } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { COST_COLUMN, FILE_COSTS, TYPICAL_COST } from './file-costs.js'

const PARTS = dirname(fileURLToPath(import.meta.url))
const TEST_ROOT = dirname(PARTS)
const PART_FILE = /^part-(\d+)\.test\.ts$/

/** Every test file under test/ but the parts themselves, in path order. */
export function testFiles (): string[] {
  return readdirSync(TEST_ROOT, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => join(TEST_ROOT, path))
    .filter((path) => dirname(path) !== PARTS)
    .sort()
}

/**
 * The files part `index` (1 to `count`) runs, of `count` parts, in path order: each file, the
 * costliest first, goes to the part with the least cost so far (the first such part on a tie).
 */
export function filesOfPart (index: number, count: number, files: readonly string[]): string[] {
  const costOf = (file: string): number => FILE_COSTS[relative(dirname(TEST_ROOT), file)]?.[COST_COLUMN] ?? TYPICAL_COST
  const totals = Array.from({ length: count }, () => 0)
  const mine = new Set<string>()
  for (const file of [...files].sort((a, b) => costOf(b) - costOf(a) || (a < b ? -1 : 1))) {
    const part = totals.indexOf(Math.min(...totals))
    totals[part] = (totals[part] ?? 0) + costOf(file)
    if (part === index - 1) mine.add(file)
  }
  return files.filter((file) => mine.has(file))
}

/**
 * Runs the part whose module URL is `partUrl`: its share of the test files, each as a suite.
 *
 * Every suite is declared at once, so the runner knows them all from the start (it ends the run,
 * and with --test-force-exit the process, when the suites it knows have ended). Their files load
 * one at a time, each once the previous one has: loads that overlap may declare one file's tests
 * in another file's suite. A file's tests belong to the suite whose body imports it; for that,
 * the promise the body waits on before its import must be one the body made itself (waiting on
 * one made elsewhere loses the suite, and the file's tests land at the top level).
 */
export function runPart (partUrl: string): void {
  holdOnToResults()
  withoutCoverageInChildren()
  const match = PART_FILE.exec(basename(fileURLToPath(partUrl)))
  if (match === null) throw new Error(`${partUrl} is not named part-N.test.ts`)
  const count = readdirSync(PARTS).filter((name) => PART_FILE.test(name)).length
  const files = filesOfPart(Number(match[1]), count, testFiles())
  const startLoading: Array<() => void> = []
  files.forEach((file, position) => {
    describe(relative(dirname(TEST_ROOT), file), async () => {
      if (position > 0) await new Promise<void>((resolve) => { startLoading[position] = resolve })
      try {
        await import(pathToFileURL(file).href)
      } finally {
        startLoading[position + 1]?.()
      }
    })
  })
}

/**
 * A part's results reach the runner through its standard output, a pipe, which Node writes to
 * asynchronously; with --test-force-exit the part's process exits once its last test ends, and
 * what was still queued for the pipe was lost: the last tests of a part (and a failure among
 * them) went unreported, and the run passed without them. Writes that block until the pipe
 * took them lose nothing.
 */
export function holdOnToResults (): void {
  const handle = (process.stdout as unknown as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle
  handle?.setBlocking?.(true)
}

/**
 * The processes a part's tests start (the built executable, the fleet's workers, npm scripts)
 * run without coverage: a part's own coverage is written where it was asked at its start, and
 * an empty NODE_V8_COVERAGE is one Node neither uses nor passes on to a child. Measured on a
 * newcomer's run: the children's coverage counted 0.5 % of the lines (95.91 % against 95.39 %)
 * for about 20 s of CPU of 225 (instrumented starts, a 2 MB report from each process, read back
 * by c8), and those lines are the executable's own, which its tests check by what it does.
 */
function withoutCoverageInChildren (): void {
  process.env.NODE_V8_COVERAGE = ''
}
