// A suite that needs something outside Node (a database server, a program) and cannot run here
// is declared as one skipped test of its name, not as a skipped `describe`: Node's runner counts
// skipped tests in its closing summary, but a skipped suite only as a suite (its body never runs,
// so its tests are never declared), and the summary read `skipped 0` while whole suites were
// skipped. Each counts as one there, and the run's last line (skipped-suites-reporter.ts) names it.
import { describe, test, type SuiteFn, type TestOptions } from 'node:test'

/** `describe(name, options, fn)`, or, when `options.skip` says why it cannot run, one skipped test in its place. */
export function describeOrSkip (name: string, options: TestOptions, fn: SuiteFn): void {
  const { skip } = options
  if (skip === undefined || skip === false) describe(name, options, fn)
  else test(name, { skip }, () => {})
}
