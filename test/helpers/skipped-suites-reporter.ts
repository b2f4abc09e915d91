// A test reporter that prints one line at the end of the run: each skipped suite, why, and what
// turns it on. A skipped suite's reason says both ("TEST_POSTGRES_URL is not set (set it, e.g. …)"),
// so the line groups the suites by reason. Skips nested inside a suite that ran are a test's own
// business (none today) and are listed the same way. The line goes to standard output.
import { writeSync } from 'node:fs'
import { relative } from 'node:path'

interface TestEvent {
  type: string
  data: { name: string, file?: string, skip?: string | boolean }
}

/** The one line for `skipped` (reason → suite names), or nothing when none was skipped. */
export function skippedSuitesLine (skipped: Map<string, string[]>): string {
  if (skipped.size === 0) return ''
  const count = [...skipped.values()].reduce((sum, names) => sum + names.length, 0)
  const groups = [...skipped].map(([reason, names]) => `${reason}: ${names.join('; ')}`)
  return `SKIPPED ${count} suite${count === 1 ? '' : 's'} (mandatory in CI): ${groups.join(' | ')}\n`
}

export default async function * skippedSuitesReporter (source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const skipped = new Map<string, string[]>()
  // Written as the runner's process exits: with --test-force-exit it exits as soon as the last
  // test ends, before a reporter's last yielded text (or even the run's summary event) gets out.
  process.once('exit', () => { writeSync(1, skippedSuitesLine(skipped)) })
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { skip, name, file } = event.data
    if (skip === undefined || skip === false) continue
    const reason = typeof skip === 'string' ? skip : 'skipped without a reason'
    const where = file === undefined ? name : `${relative(process.cwd(), file)}: ${name}`
    skipped.set(reason, [...(skipped.get(reason) ?? []), where])
  }
  yield * []
}
