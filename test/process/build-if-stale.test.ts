// The launcher of `npm start` (scripts/build-if-stale.js) builds only when dist/ is older than
// src/, then lets the service run in the same process. Run on a copy of the scripts in a
// temporary project whose `tsc` is a stand-in that records each build and writes dist/.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, beforeEach, test } from 'node:test'
import { ROOT } from '../../scripts/dist-freshness.js'
import { pollUntil } from '../helpers/poll.js'
import { alive } from '../helpers/server-processes.js'

const project = mkdtempSync(join(tmpdir(), 'blog-read-api-launcher-'))
after(() => rmSync(project, { recursive: true, force: true }))
const at = (...path: string[]): string => join(project, ...path)

/**
 * The stand-in compiler: records that it ran (and its pid), writes dist/main.js (which prints its
 * pid), exits with TSC_EXIT_CODE; with TSC_HANG, it never ends by itself.
 */
const FAKE_TSC = `
const { appendFileSync, mkdirSync, writeFileSync } = require('node:fs')
appendFileSync('builds', 'built\\n')
writeFileSync('tsc.pid', String(process.pid))
if (process.env.TSC_HANG) setInterval(() => {}, 1000)
else {
mkdirSync('dist/deep', { recursive: true })
writeFileSync('dist/main.js', 'console.log("main pid " + process.pid)\\n')
writeFileSync('dist/deep/module.js', '')
process.exit(Number(process.env.TSC_EXIT_CODE ?? 0))
}
`

beforeEach(() => {
  rmSync(project, { recursive: true, force: true })
  for (const folder of ['scripts', 'src/deep', 'node_modules/@typescript/native/bin']) mkdirSync(at(folder), { recursive: true })
  for (const script of ['build-if-stale.js', 'dist-freshness.js']) copyFileSync(join(ROOT, 'scripts', script), at('scripts', script))
  writeFileSync(at('package.json'), '{ "type": "module" }\n')
  // TypeScript 7 exports its package.json, not its bin/: the launcher finds the compiler beside it.
  writeFileSync(at('node_modules/@typescript/native/package.json'), '{ "name": "typescript", "exports": { "./package.json": "./package.json" } }\n')
  writeFileSync(at('node_modules/@typescript/native/bin/tsc'), FAKE_TSC)
  writeFileSync(at('src/main.ts'), '')
  writeFileSync(at('src/deep/module.ts'), '')
})

/** `node --import ./scripts/build-if-stale.js dist/main.js`, as `npm start` runs the CLI. */
function start (env: NodeJS.ProcessEnv = {}): { pid: number, status: number | null, stdout: string, stderr: string, builds: number } {
  const { pid, status, stdout, stderr } = spawnSync(process.execPath, ['--import', './scripts/build-if-stale.js', 'dist/main.js'], { cwd: project, env: { ...process.env, ...env }, encoding: 'utf8' })
  const builds = existsSync(at('builds')) ? readFileSync(at('builds'), 'utf8').split('\n').filter((line) => line !== '').length : 0
  return { pid, status, stdout, stderr, builds }
}

/** Sets a file's modification time `secondsAgo` in the past. */
const age = (path: string, secondsAgo: number): void => {
  const when = new Date(Date.now() - secondsAgo * 1000)
  utimesSync(at(path), when, when)
}

test('no dist/: it builds, then runs the service in the same process', () => {
  const first = start()
  assert.equal(first.status, 0, first.stderr)
  assert.equal(first.builds, 1)
  assert.match(first.stderr, /^src\/\S+ is newer than dist\/: building \(tsc -p tsconfig.build.json\)$/m)
  assert.equal(first.stdout, `main pid ${first.pid}\n`, 'the service runs in the process started, after the build')
})

test('a current dist/: no build, and the compiler is never started', () => {
  start()
  const again = start()
  assert.equal(again.status, 0, again.stderr)
  assert.equal(again.builds, 1, 'no second build')
  assert.equal(again.stderr, '')
  assert.equal(again.stdout, `main pid ${again.pid}\n`)
})

test('a src/ module changed since the build, however deep: it builds again', () => {
  start()
  age('dist/main.js', 60)
  age('dist/deep/module.js', 60)
  age('src/main.ts', 120)
  // Only the deep module is newer than its output.
  const again = start()
  assert.equal(again.builds, 2)
  assert.match(again.stderr, /^src\/deep\/module\.ts is newer than dist\//m)
})

test('a build that fails: the service does not run, the exit code is the compiler\'s', () => {
  const failed = start({ TSC_EXIT_CODE: '2' })
  assert.equal(failed.status, 2)
  assert.match(failed.stderr, /the build failed \(exit code 2\): dist\/ is not current/)
  assert.doesNotMatch(failed.stdout, /main pid/)
})

test('a signal during the build stops the compiler too, and the service never starts', async () => {
  const launcher = spawn(process.execPath, ['--import', './scripts/build-if-stale.js', 'dist/main.js'], { cwd: project, env: { ...process.env, TSC_HANG: '1' } })
  let stdout = ''
  launcher.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  const exited = once(launcher, 'exit')
  // The pid file can be read between its creation and its write: empty is not yet a pid (and a
  // pid of 0 would make alive() ask about this process group, which never ends).
  const compiler = await pollUntil('the compiler started', () => {
    const pid = existsSync(at('tsc.pid')) ? Number(readFileSync(at('tsc.pid'), 'utf8')) : 0
    return pid > 0 ? pid : undefined
  }, { withinMs: 20_000 })
  launcher.kill('SIGTERM')
  const [code] = await exited
  assert.equal(code, 143)
  await pollUntil('the compiler ended', () => !alive(compiler), { withinMs: 20_000 })
  assert.equal(stdout, '')
})
