// `npm start` and `npm run example` as a supervisor runs them: the process npm starts is the
// service itself (no shell in between), so a SIGTERM or SIGINT to npm's PID, which npm forwards,
// closes it gracefully: npm exits 0, no process it started is left, and the ports are free.
// On a current build (checked first) neither script builds.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { ROOT } from '../../scripts/dist-freshness.js'
import { assertBuilt } from '../helpers/built.js'
import { seedTestStore } from '../helpers/databases.js'
import { freePort } from '../helpers/fake-upstream.js'
import { alive, commandLine, descendantsOf, portRefused } from '../helpers/server-processes.js'
import { get } from '../helpers/http.js'

assertBuilt()
/** Far beyond the service's shutdown budget (SHUTDOWN_TIMEOUT_MS, set to 5 s below). */
const EXIT_GUARD_MS = 20_000
const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-npm-'))
const database = join(dir, 'blog.db')
before(async () => { await seedTestStore({ dialect: 'sqlite', filename: database }) })
after(() => rmSync(dir, { recursive: true, force: true }))

interface Script {
  name: string
  /** Its settings, on free ports; the ports to check afterwards. */
  prepare: () => Promise<{ env: NodeJS.ProcessEnv, ports: number[], url: string }>
  /** The line it prints once it serves. */
  ready: RegExp
  /** What the process npm starts runs. */
  runs: RegExp
}

const SCRIPTS: Script[] = [
  {
    name: 'start',
    prepare: async () => {
      const [blog, posts] = [await freePort(), await freePort()]
      return { env: { DATABASE_URL: database, BLOG_PORT: String(blog), POSTS_PORT: String(posts), SHUTDOWN_TIMEOUT_MS: '5000' }, ports: [blog, posts], url: `http://127.0.0.1:${blog}/api/blog` }
    },
    ready: /front API listening at/,
    runs: /^\S*node --import \.\/scripts\/on-supported-node\.js --import \.\/scripts\/build-if-stale\.js dist\/cli\.js serve$/
  },
  {
    name: 'example',
    prepare: async () => {
      const port = await freePort()
      return { env: { EXAMPLE_PORT: String(port) }, ports: [port], url: `http://127.0.0.1:${port}/` }
    },
    ready: /example page: /,
    runs: /^\S*node --import \.\/scripts\/on-supported-node\.js --import \.\/scripts\/build-if-stale\.js --import tsx examples\/blog-page\/server\.ts$/
  }
]

describe('npm scripts stop on a signal to npm, leaving no process and no open port', { concurrency: true }, () => {
  for (const script of SCRIPTS) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      test(`npm run ${script.name}, then ${signal} to npm`, { timeout: 60_000 }, async () => {
        const { env, ports, url } = await script.prepare()
        const npm = spawn('npm', ['run', '--silent', script.name], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
        let output = ''
        npm.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
        npm.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
        const exited = once(npm, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
        let below: number[] = []
        try {
          await new Promise<void>((resolve, reject) => {
            const check = (): void => { if (script.ready.test(output)) resolve() }
            npm.stdout.on('data', check)
            exited.then(() => reject(new Error(`npm ended before serving: ${output}`)), reject)
          })
          assert.equal((await get(url, '')).status, 200)
          assert.doesNotMatch(output, /building|tsc/, 'a current build is not rebuilt')

          // tsx's transform service (esbuild), started by the example's own process when its
          // cache is cold, is a helper of the service, not a shell in between.
          below = descendantsOf(npm.pid ?? 0).filter((pid) => !/esbuild --service/.test(commandLine(pid)))
          assert.equal(below.length, 1, `one process below npm: ${below.map(commandLine).join(' | ')}`)
          assert.match(commandLine(below[0] ?? 0), script.runs, 'the process npm starts is the service, no shell in between')

          npm.kill(signal)
          // Not a measure of speed: a guard, so that a script that ignores the signal fails
          // here (and is killed below) rather than hanging the suite.
          const guard = new AbortController()
          const [code, killedBy] = await Promise.race([exited, sleep(EXIT_GUARD_MS, undefined, { signal: guard.signal }).then(() => {
            throw new Error(`npm was still running ${EXIT_GUARD_MS} ms after ${signal}: ${output}`)
          })]).finally(() => guard.abort())
          assert.deepEqual({ code, killedBy }, { code: 0, killedBy: null }, output)
          assert.equal(alive(npm.pid ?? 0), false, 'npm has gone')
          assert.deepEqual(below.filter(alive), [], 'no process it started is left (the service\'s among them)')
          for (const port of ports) assert.ok(await portRefused(port), `port ${port} is free`)
        } finally {
          // Only when the test failed: nothing of this run may outlive it.
          npm.kill('SIGKILL')
          for (const pid of below.filter(alive)) process.kill(pid, 'SIGKILL')
        }
      })
    }
  }
})
