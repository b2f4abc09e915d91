// Runs a test command (c8 around `node --test`, as `npm run test:only` does), then prints the line
// of skipped suites that test/helpers/skipped-suites-reporter.ts wrote, so that it is the run's
// last line: c8 writes its coverage report after the runner has exited, below anything the
// runner's reporters print. Ends with the command's status (128 + n for a signal n).
//   node scripts/skipped-suites-last.js COMMAND [ARGS...]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runChild } from './supported-node.js'

const [command, ...args] = process.argv.slice(2)
if (command === undefined) {
  process.stderr.write('usage: node scripts/skipped-suites-last.js COMMAND [ARGS...]\n')
  process.exit(2)
}
const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-skipped-'))
const file = join(dir, 'line')
// The reporter writes its line there instead of to its standard output.
process.env.SKIPPED_SUITES_FILE = file
const status = await runChild(command, args)
try {
  process.stdout.write(readFileSync(file, 'utf8'))
} catch (err) {
  // No file: the runner ended before writing it (a crash, a signal), or ran no reporter.
  if (err.code !== 'ENOENT') throw err
} finally {
  rmSync(dir, { recursive: true, force: true })
}
process.exitCode = status
