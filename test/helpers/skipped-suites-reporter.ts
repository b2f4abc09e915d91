// A test reporter that prints one line at the end of the run: each skipped suite, why, and what
// turns it on. A skipped suite's reason says both ("TEST_POSTGRES_URL is not set (set it, e.g. …)"),
// so the line groups the suites by reason. Skips nested inside a suite that ran are a test's own
// business (none today) and are listed the same way. The line goes to standard output, or, when
// SKIPPED_SUITES_FILE names a file, there: `npm test` prints it from that file once c8's coverage
// report is out (scripts/skipped-suites-last.js), so that it is the run's last line.
import { writeFileSync, writeSync } from 'node:fs'

interface TestEvent {
  type: string
  data: { name: string, nesting: number, skip?: string | boolean }
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
  process.once('exit', () => {
    const line = skippedSuitesLine(skipped)
    const file = process.env.SKIPPED_SUITES_FILE
    if (file === undefined || file === '') writeSync(1, line)
    else writeFileSync(file, line)
  })
  // The names of the tests being reported, by nesting. A skipped suite is named by them (in
  // `npm test`, the first is its file's path: test/parts run each file as a suite named so), not
  // by the event's file, which is where `test` was called (a shared suite's module, a helper).
  // The runner reports one file's events together, each file after the other, so one path will do.
  const path: string[] = []
  for await (const { type, data } of source) {
    if (type === 'test:start') {
      path.length = data.nesting
      path.push(data.name)
    }
    if ((type !== 'test:pass' && type !== 'test:fail') || data.skip === undefined || data.skip === false) continue
    const reason = typeof data.skip === 'string' ? data.skip : 'skipped without a reason'
    skipped.set(reason, [...(skipped.get(reason) ?? []), [...path.slice(0, data.nesting), data.name].join(' > ')])
  }
  yield * []
}
