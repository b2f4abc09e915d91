// `npm test` runs test/parts/*.test.ts, each a share of the test files: every test file must be
// in exactly one share, or it would run twice or never, and every result of a share must reach
// the runner.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { filesOfPart, testFiles } from '../parts/part.js'

/** Tests of the fixture part below. */
const TESTS = 3000

test('every test file is run by exactly one part', () => {
  const count = readdirSync(fileURLToPath(new URL('../parts/', import.meta.url))).filter((name) => /^part-\d+\.test\.ts$/.test(name)).length
  assert.ok(count >= 2)
  const files = testFiles()
  assert.ok(files.includes(fileURLToPath(import.meta.url)), 'this file is among them')
  assert.ok(files.every((file) => !file.includes('/parts/')), 'the parts are not')
  const shares = Array.from({ length: count }, (_, i) => filesOfPart(i + 1, count, files))
  assert.deepEqual(shares.flat().sort(), files)
  assert.ok(shares.every((share) => share.length > 0))
})

test('a part\'s last results reach the runner, though its process is made to exit once its last test ends', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'part-results-'))
  t.after(async () => { await rm(dir, { recursive: true, force: true }) })
  // Enough quick tests that their results outgrow a pipe's buffer by far.
  const fixture = join(dir, 'many.test.ts')
  await writeFile(fixture, `import { test } from 'node:test'
import { holdOnToResults } from ${JSON.stringify(fileURLToPath(new URL('../parts/part.ts', import.meta.url)))}
holdOnToResults()
for (let i = 0; i < ${TESTS}; i++) test(\`quick \${i} ${'x'.repeat(200)}\`, () => {})
`)
  const report = join(dir, 'report.tap')
  // A run of its own, not a child reporting to this one's runner.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-force-exit', '--test-reporter=tap', `--test-reporter-destination=${report}`, fixture], { encoding: 'utf8', env })
  assert.equal(run.status, 0, run.stderr)
  assert.match(await readFile(report, 'utf8'), new RegExp(`^# pass ${TESTS}$`, 'm'))
})
