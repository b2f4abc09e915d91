// scripts/run-together.js, as `npm test` runs the checks beside the tests: the live script writes
// as it goes, each held one is written whole once it ends, and a failure anywhere fails the run,
// named last.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ROOT } from '../../scripts/dist-freshness.js'

const project = mkdtempSync(join(tmpdir(), 'blog-read-api-run-together-'))
after(() => rmSync(project, { recursive: true, force: true }))

/** Node code that waits until `file` (in the project) exists, then runs `then`. */
const whenExists = (file: string, then: string): string =>
  `const t = setInterval(() => { if (require('fs').existsSync('${file}')) { clearInterval(t); ${then} } }, 5)`

// The held script writes half a report, and its second half only once the live script has
// written a line after it: held, its report comes whole, after that line.
writeFileSync(join(project, 'package.json'), JSON.stringify({
  scripts: {
    held: `node -e "process.stdout.write('first half, '); require('fs').writeFileSync('held-started', ''); ${whenExists('live-wrote', "console.log('second half')")}"`,
    live: `node -e "${whenExists('held-started', "console.log('live line'); require('fs').writeFileSync('live-wrote', '')")}"`,
    passes: 'node -e "console.log(\'checked\')"',
    fails: 'node -e "console.error(\'lint says no\'); process.exit(2)"'
  }
}))

async function runTogether (...args: string[]): Promise<{ status: number | null, stdout: string, stderr: string }> {
  for (const marker of ['held-started', 'live-wrote']) rmSync(join(project, marker), { force: true })
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-together.js'), ...args], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const [status] = await once(child, 'close') as [number | null]
  return { status, stdout, stderr }
}

test('a held report is written whole when its script ends, after the live lines written meanwhile; all passed: 0', async () => {
  const { status, stdout, stderr } = await runTogether('held', 'passes', '--live', 'live')
  assert.equal(status, 0, stderr)
  assert.equal(stderr, '')
  const live = stdout.indexOf('live line\n')
  assert.ok(live !== -1 && stdout.indexOf('first half, second half\n') > live, stdout)
  assert.ok(stdout.includes('checked\n'), stdout)
})

test('a held script that fails fails the run, named last, and the live one still runs to its end', async () => {
  const { status, stdout, stderr } = await runTogether('fails', 'held', '--live', 'live')
  assert.equal(status, 1)
  // A held script's report (standard output and error) is one block on standard output.
  assert.ok(stdout.includes('live line\n') && stdout.includes('first half, second half\n') && stdout.includes('lint says no\n'), stdout)
  assert.equal(stderr, 'npm run fails failed (exit code 2)\n')
})

test('the live script failing fails the run', async () => {
  const { status, stderr } = await runTogether('passes', '--live', 'fails')
  assert.equal(status, 1)
  assert.equal(stderr, 'lint says no\nnpm run fails failed (exit code 2)\n')
})
