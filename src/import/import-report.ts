// What an import tells its user: one line per bad file and per ignored key (stderr), what a dry
// run would do and the summary (stdout), and its progress on stderr: a bar redrawn in place
// when stderr is a terminal, plain lines otherwise (logs, CI, pipes).
import type { Writable } from 'node:stream'
import type { UpsertOutcome } from '../store/store.js'

export interface ImportCounts {
  imported: number
  updated: number
  unchanged: number
  drafts: number
  failed: number
}

export type Phase = 'checking' | 'writing'

interface Output {
  stdout: Writable
  stderr: Writable & { isTTY?: boolean, columns?: number }
}

const BAR_WIDTH = 30
/** A terminal is redrawn at most this often; plain lines are written once per batch instead. */
const REDRAW_MS = 100

export class ImportReport {
  readonly counts: ImportCounts = { imported: 0, updated: 0, unchanged: 0, drafts: 0, failed: 0 }
  readonly #output: Output
  readonly #dryRun: boolean
  readonly #tty: boolean
  readonly #ignoredKeys = new Set<string>()
  readonly #clock: () => number
  #bar = ''
  #lastDraw = 0

  constructor (output: Output, { dryRun, clock = Date.now }: { dryRun: boolean, clock?: () => number }) {
    this.#output = output
    this.#dryRun = dryRun
    this.#clock = clock
    this.#tty = output.stderr.isTTY === true
  }

  fail (path: string, reason: string): void {
    this.counts.failed++
    this.#warn(`${path}: ${reason}`)
  }

  /**
   * Each draft named, with what became of it: kept out (`stored` undefined), or written as the
   * other posts are, its `draft`/`status` column marking it (`marks`).
   */
  draft (path: string, stored?: { outcome: UpsertOutcome, marks: string }): void {
    this.counts.drafts++
    const would = this.#dryRun ? 'would be ' : ''
    const what = stored === undefined
      ? `${would}kept out (the posts table has no \`draft\` or \`status\` column)`
      : `${stored.outcome === 'unchanged' ? 'unchanged' : `${would}${stored.outcome === 'inserted' ? 'imported' : 'updated'}`}, marked by ${stored.marks}`
    this.#warn(`${path}: a draft, ${what}`)
  }

  /** Reported the first time the key is met, with the file it was met in. */
  ignore (key: string, reason: string, path: string): void {
    if (this.#ignoredKeys.has(key)) return
    this.#ignoredKeys.add(key)
    this.#warn(`ignored ${key === 'the body' ? 'the Markdown body' : `front-matter key "${key}"`} (${reason}), first in ${path}`)
  }

  written (slug: string, path: string, outcome: UpsertOutcome): void {
    if (outcome === 'inserted') this.counts.imported++
    else this.counts[outcome]++
    if (this.#dryRun && outcome !== 'unchanged') {
      this.#print(this.#output.stdout, `would ${outcome === 'inserted' ? 'insert' : 'update'} ${slug} (${path})`)
    }
  }

  /** `done` of `total` files (total unknown while the tree is walked). */
  progress (phase: Phase, done: number, total?: number): void {
    if (this.#tty) {
      const now = this.#clock()
      if (now - this.#lastDraw < REDRAW_MS && done !== total) return
      this.#lastDraw = now
      this.#draw(this.#barLine(phase, done, total))
    } else if (phase === 'writing') {
      this.#output.stderr.write(`${this.#dryRun ? 'comparing' : 'writing'}: ${done}/${total ?? '?'} files done\n`)
    }
  }

  /** The last line: counts, and whether anything was written. */
  summary (): void {
    this.#draw('')
    const { imported, updated, unchanged, drafts, failed } = this.counts
    const line = this.#dryRun
      ? `would import ${imported}, would update ${updated}, unchanged ${unchanged}, drafts ${drafts}, failed ${failed} (dry run: nothing written)`
      : `imported ${imported}, updated ${updated}, unchanged ${unchanged}, drafts ${drafts}, failed ${failed}`
    this.#output.stdout.write(`${line}\n`)
  }

  #barLine (phase: Phase, done: number, total: number | undefined): string {
    if (total === undefined || total === 0) return `${phase} files: ${done}`
    const filled = Math.round(BAR_WIDTH * done / total)
    const percent = Math.floor(100 * done / total)
    return `${phase} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${percent}% ${done}/${total}`
  }

  #warn (line: string): void {
    this.#print(this.#output.stderr, line)
  }

  /** A line above the bar: the bar is erased, the line written, the bar drawn again. */
  #print (stream: Writable, line: string): void {
    const bar = this.#bar
    this.#draw('')
    stream.write(`${line}\n`)
    this.#draw(bar)
  }

  #draw (bar: string): void {
    if (!this.#tty || bar === this.#bar) return
    // A pseudo-terminal without a size reports 0 columns.
    const width = this.#output.stderr.columns !== undefined && this.#output.stderr.columns > 0 ? this.#output.stderr.columns : 80
    this.#output.stderr.write(`\r\x1b[2K${bar.slice(0, width - 1)}`)
    this.#bar = bar
  }
}
