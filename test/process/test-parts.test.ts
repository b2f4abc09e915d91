// `npm test` runs test/parts/*.test.ts, each a share of the test files: every test file must be
// in exactly one share, or it would run twice or never, and every result of a share must reach
// the runner.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { COST_COLUMN, FILE_COSTS, TYPICAL_COST } from '../parts/file-costs.js'
import { filesOfPart, testFiles } from '../parts/part.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

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

test('as many parts as npm test runs at once, sharing the files out by their costs, each named file there', async () => {
  const count = readdirSync(fileURLToPath(new URL('../parts/', import.meta.url))).filter((name) => /^part-\d+\.test\.ts$/.test(name)).length
  const script = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['test:only']
  assert.match(script ?? '', new RegExp(` --test-concurrency=${count} `))
  const named = Object.keys(FILE_COSTS)
  assert.deepEqual(named.filter((file) => !existsSync(join(ROOT, file))), [], 'every file named in file-costs.ts is there')
  const cost = (file: string): number => FILE_COSTS[relative(ROOT, file)]?.[COST_COLUMN] ?? TYPICAL_COST
  const totals = Array.from({ length: count }, (_, i) => filesOfPart(i + 1, count, testFiles()).reduce((sum, file) => sum + cost(file), 0))
  // Each file goes to the part with the least so far: no part ends up more than a file's cost beyond another.
  assert.ok(Math.max(...totals) - Math.min(...totals) <= Math.max(...Object.values(FILE_COSTS).map((costs) => costs[COST_COLUMN])), totals.join(', '))
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
