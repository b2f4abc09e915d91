// Which Node.js line the tests run on. CI runs each part of its run on one line and names it
// (TEST_NODE_LINE): the tests, and every `node` they start from PATH, must be on that line, not
// on whatever Node the machine has first. Without a name, they must be on a supported line
// (package.json's `engines`), which the scripts see to on an older machine.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { satisfies } from '../../scripts/supported-node.js'

const major = (version: string): string => version.replace(/^v/, '').split('.')[0] ?? ''
const engines = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node

test('the tests, and the node they start, run on the line the run names, or on a supported one', (t) => {
  const named = process.env.TEST_NODE_LINE
  // Said in the run's log, so that each part of a CI run shows the line it ran on.
  t.diagnostic(`running on Node ${process.version}; the line named: ${named ?? 'none'}`)
  if (process.env.CI === 'true') assert.ok(named !== undefined && named !== '', 'CI names the Node line of each part (TEST_NODE_LINE)')
  const started = execFileSync('node', ['--version'], { encoding: 'utf8' }).trim()
  assert.equal(major(started), major(process.version), `the node in PATH (${started}) is the one running the tests (${process.version})`)
  if (named !== undefined && named !== '') assert.equal(major(process.version), named, `running on Node ${process.version}, not on the line the run names`)
  assert.ok(satisfies(process.version, engines), `Node ${process.version} is not a supported line (${engines})`)
})
