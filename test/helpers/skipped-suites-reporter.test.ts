// The run's last line: each skipped suite, why, and what turns it on, grouped by reason; after
// c8's coverage report, as `npm run test:only` runs it; and the runner's summary counting each.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { skippedSuitesLine } from './skipped-suites-reporter.js'

/** The environment without the variable by which Node's test runner tells a child it is one of its files. */
function runnerFree (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // Nor the file this run's own line goes to (under npm test): the fixture's line goes to its stdout.
  const { NODE_TEST_CONTEXT: _, SKIPPED_SUITES_FILE: __, ...rest } = env
  // Nor this run's coverage folder: c8 takes NODE_V8_COVERAGE for its own folder and empties it
  // first, which threw away the coverage of every part of npm test that had ended (the coverage
  // check passed or failed with the order of the parts). Empty, not absent: Node gives a child
  // that lacks it the parent's.
  return { ...rest, NODE_V8_COVERAGE: '' }
}

const REPORTER = fileURLToPath(new URL('./skipped-suites-reporter.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const LAST = join(ROOT, 'scripts/skipped-suites-last.js')
const C8 = createRequire(import.meta.url).resolve('c8/bin/c8.js')

test('no skipped suite: no line', () => {
  assert.equal(skippedSuitesLine(new Map()), '')
})

test('a run with suites skipped for two reasons ends with one line naming each suite, by the suites around it, under its reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skipped-suites-'))
  try {
    writeFileSync(join(dir, 'a.test.mjs'), [
      "import { describe, it } from 'node:test'",
      "describe('test/store/postgres.test.ts', () => {",
      "  describe('PostgreSQL store', { skip: 'TEST_POSTGRES_URL is not set (set it)' }, () => { it('reads', () => {}) })",
      "  describe('SQLite store', () => { it('reads', () => {}) })",
      '})',
      "describe('PostgreSQL import', { skip: 'TEST_POSTGRES_URL is not set (set it)' }, () => { it('imports', () => {}) })",
      "describe('browser', { skip: 'chromium is missing (apt-get install chromium)' }, () => { it('shows', () => {}) })"
    ].join('\n'))
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), '--test', `--test-reporter=${REPORTER}`, 'a.test.mjs'], { cwd: dir, env: runnerFree(process.env) })
    assert.equal(stdout,
      'SKIPPED 3 suites (mandatory in CI): TEST_POSTGRES_URL is not set (set it): test/store/postgres.test.ts > PostgreSQL store; PostgreSQL import' +
      ' | chromium is missing (apt-get install chromium): browser\n')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('npm run test:only: c8 runs under the script that prints the line last', () => {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['test:only'] ?? ''
  assert.match(script, /^node scripts\/on-supported-node\.js node scripts\/skipped-suites-last\.js c8 .* --test-reporter=\.\/test\/helpers\/skipped-suites-reporter\.ts /)
})

test('around c8, the line comes after its coverage report; the summary counts each skipped suite; the status is the run\'s; the coverage of the run around it is left alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skipped-suites-'))
  // As under npm test: the coverage folder of the run this test is part of, holding a part's coverage.
  const outerCoverage = join(dir, 'outer-coverage')
  mkdirSync(outerCoverage)
  writeFileSync(join(outerCoverage, 'coverage-of-an-ended-part.json'), '{}')
  try {
    writeFileSync(join(dir, 'a.test.mjs'), [
      "import { describe, it } from 'node:test'",
      `import { describeOrSkip } from '${import.meta.resolve('./describe-or-skip.ts')}'`,
      "describeOrSkip('MySQL store', { skip: 'TEST_MYSQL_URL is not set (set it)' }, () => { it('reads', () => {}); it('writes', () => {}) })",
      "describeOrSkip('browser', { skip: 'chromium is missing (apt-get install chromium)' }, () => { it('shows', () => {}) })",
      "describeOrSkip('SQLite store', { skip: false }, () => { it('reads', () => {}) })",
      "describe('a failure', () => { it('fails', () => { throw new Error('on purpose') }) })"
    ].join('\n'))
    const run = await promisify(execFile)(process.execPath, [LAST, process.execPath, C8, '--reporter', 'text', process.execPath, '--import', import.meta.resolve('tsx'), '--test',
      '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', 'a.test.mjs'], { cwd: dir, env: runnerFree({ ...process.env, NODE_V8_COVERAGE: outerCoverage }) })
      .then(() => assert.fail('a run with a failing test exits 0'), (err: { code: number, stdout: string }) => err)
    assert.ok(existsSync(join(outerCoverage, 'coverage-of-an-ended-part.json')), 'the coverage of the run around it is still there')
    assert.equal(run.code, 1, 'the status of the run, through c8 and the script')
    const lines = run.stdout.trimEnd().split('\n')
    assert.equal(lines.at(-1), 'SKIPPED 2 suites (mandatory in CI): TEST_MYSQL_URL is not set (set it): MySQL store' +
      ' | chromium is missing (apt-get install chromium): browser')
    assert.ok(lines.findIndex((line) => /% Lines/.test(line)) > lines.findIndex((line) => /ℹ skipped/.test(line)), 'c8\'s report follows the runner\'s summary')
    assert.match(run.stdout, /^ℹ skipped 2$/m, 'each skipped suite counts in the runner\'s summary')
    assert.match(run.stdout, /^ℹ pass 1$/m)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
