// The run's last line: each skipped suite, why, and what turns it on, grouped by reason.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { skippedSuitesLine } from './skipped-suites-reporter.js'

/** The environment without the variable by which Node's test runner tells a child it is one of its files. */
function runnerFree (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...rest } = env
  return rest
}

const REPORTER = fileURLToPath(new URL('./skipped-suites-reporter.ts', import.meta.url))

test('no skipped suite: no line', () => {
  assert.equal(skippedSuitesLine(new Map()), '')
})

test('a run with suites skipped for two reasons ends with one line naming each suite under its reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skipped-suites-'))
  try {
    writeFileSync(join(dir, 'a.test.mjs'), [
      "import { describe, it } from 'node:test'",
      "describe('PostgreSQL store', { skip: 'TEST_POSTGRES_URL is not set (set it)' }, () => { it('reads', () => {}) })",
      "describe('PostgreSQL import', { skip: 'TEST_POSTGRES_URL is not set (set it)' }, () => { it('imports', () => {}) })",
      "describe('browser', { skip: 'chromium is missing (apt-get install chromium)' }, () => { it('shows', () => {}) })",
      "describe('SQLite store', () => { it('reads', () => {}) })"
    ].join('\n'))
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), '--test', `--test-reporter=${REPORTER}`, 'a.test.mjs'], { cwd: dir, env: runnerFree(process.env) })
    assert.equal(stdout,
      'SKIPPED 3 suites (mandatory in CI): TEST_POSTGRES_URL is not set (set it): a.test.mjs: PostgreSQL store; a.test.mjs: PostgreSQL import' +
      ' | chromium is missing (apt-get install chromium): a.test.mjs: browser\n')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
