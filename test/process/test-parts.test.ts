// `npm test` runs test/parts/*.test.ts, each a share of the test files: every test file must be
// in exactly one share, or it would run twice or never.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { filesOfPart, testFiles } from '../parts/part.js'

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
