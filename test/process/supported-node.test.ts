// scripts/on-supported-node.js (and supported-node.js): on a Node older than package.json's `engines`, the command runs on
// a supported line from the cache (here the cache holds this very node, and the copied project's
// `engines` asks for a Node that does not exist yet, so the running one counts as too old).
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ROOT } from '../../scripts/dist-freshness.js'
import { RUN_LINE, satisfies } from '../../scripts/supported-node.js'
import { pollUntil } from '../helpers/poll.js'

test('engines ranges: ^X.Y.Z stays on its major, >=X.Y.Z reaches every later one', () => {
  const range = '^22.14.0 || ^24.0.0 || >=26.0.0'
  for (const version of ['v22.14.0', 'v22.23.3', '24.0.0', 'v24.21.0', 'v26.0.0', 'v27.1.0']) assert.ok(satisfies(version, range), version)
  for (const version of ['v20.20.2', 'v22.13.1', 'v23.11.0', 'v25.9.0', 'v18.0.0']) assert.ok(!satisfies(version, range), version)
  assert.throws(() => satisfies('v24.0.0', '~24.1.0'), /cannot read the engines range "~24.1.0"/)
})

const project = mkdtempSync(join(tmpdir(), 'blog-read-api-supported-node-'))
after(() => rmSync(project, { recursive: true, force: true }))
const cache = join(project, 'cache')
mkdirSync(join(project, 'scripts'))
for (const script of ['on-supported-node.js', 'supported-node.js', 'node-line.js']) copyFileSync(join(ROOT, 'scripts', script), join(project, 'scripts', script))
writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=999.0.0' } }))
mkdirSync(join(cache, 'blog-read-api', `node-${RUN_LINE}`, 'bin'), { recursive: true })
symlinkSync(process.execPath, join(cache, 'blog-read-api', `node-${RUN_LINE}`, 'bin', 'node'))
// What runs: ready for SIGTERM before it says which node and whether it was told it is the chosen
// one (the test signals once it has read that), then waits.
writeFileSync(join(project, 'main.js'), `
process.on('SIGTERM', () => { console.log('closing'); process.exit(0) })
console.log(JSON.stringify({ pid: process.pid, chosen: process.env.BLOG_READ_API_SUPPORTED_NODE === '1', argv: process.argv.slice(2), path: process.env.PATH.split(':')[0] }))
setInterval(() => {}, 1000)
`)
const env = { ...process.env, XDG_CACHE_HOME: cache, BLOG_READ_API_SUPPORTED_NODE: undefined }
const bin = join(cache, 'blog-read-api', `node-${RUN_LINE}`, 'bin')

test('as a preload on a Node that is too old: the same command line runs on the cached line, SIGTERM reaches it, its status is ours', async () => {
  const launcher = spawn(process.execPath, ['--import', './scripts/on-supported-node.js', 'main.js', 'serve'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  launcher.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  launcher.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  await pollUntil('the command started', () => stdout.includes('\n'), { withinMs: 10_000 })
  const started = JSON.parse(stdout.split('\n')[0] as string) as { pid: number, chosen: boolean, argv: string[], path: string }
  assert.notEqual(started.pid, launcher.pid, 'the command ran in a child on the supported node')
  assert.deepEqual({ chosen: started.chosen, argv: started.argv, path: started.path }, { chosen: true, argv: ['serve'], path: bin })
  assert.match(stderr, new RegExp(`is older than the supported lines \\(>=999\\.0\\.0\\): running on Node\\.js ${RUN_LINE} from `))
  launcher.kill('SIGTERM')
  const [code] = await once(launcher, 'exit') as [number | null]
  assert.equal(code, 0)
  assert.match(stdout, /closing/)
  assert.throws(() => process.kill(started.pid, 0), /ESRCH/, 'the child is gone')
})

test('as a command: COMMAND runs with the supported bin first in PATH, and exits with its status; --bin prints that folder', () => {
  const ran = spawnSync(process.execPath, ['scripts/on-supported-node.js', 'node', '-e', 'console.log(process.env.PATH.split(":")[0]); process.exit(3)'], { cwd: project, env, encoding: 'utf8' })
  assert.equal(ran.status, 3)
  assert.equal(ran.stdout.trim(), bin)
  const printed = spawnSync(process.execPath, ['scripts/on-supported-node.js', '--bin'], { cwd: project, env, encoding: 'utf8' })
  assert.equal(printed.stdout.trim(), bin)
})

test('on a supported Node it does nothing: no child, no PATH change, --bin prints nothing', () => {
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=1.0.0' } }))
  try {
    const ran = spawnSync(process.execPath, ['--import', './scripts/on-supported-node.js', '-e', 'console.log(process.pid)'], { cwd: project, env, encoding: 'utf8' })
    assert.equal(ran.stdout.trim(), String(ran.pid))
    assert.equal(ran.stderr, '')
    assert.equal(spawnSync(process.execPath, ['scripts/on-supported-node.js', '--bin'], { cwd: project, env, encoding: 'utf8' }).stdout, '\n')
  } finally {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=999.0.0' } }))
  }
  assert.equal(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).engines.node, '>=999.0.0')
})
