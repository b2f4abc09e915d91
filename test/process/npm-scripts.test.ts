// `npm start` and `npm run example` as a supervisor runs them: the process npm starts is the
// service itself (no shell in between), so a SIGTERM or SIGINT to npm's PID, which npm forwards,
// closes it gracefully: npm exits 0, no process it started is left, and the ports are free.
// On a current build (checked first) neither script builds.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { assertBuilt } from '../helpers/built.js'
import { seedTestStore } from '../helpers/databases.js'
import { freePort } from '../helpers/fake-upstream.js'
import { commandLine, descendantsOf, startNpmScript } from '../helpers/server-processes.js'
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
        const npm = startNpmScript(script.name, { ...env, LOG_LEVEL: 'info' })
        let below: number[] = []
        try {
          await npm.served(script.ready)
          assert.equal((await get(url, '')).status, 200)
          assert.doesNotMatch(npm.output(), /building|tsc/, 'a current build is not rebuilt')

          // tsx's transform service (esbuild), started by the example's own process when its
          // cache is cold, is a helper of the service, not a shell in between.
          below = descendantsOf(npm.pid).filter((pid) => !/esbuild --service/.test(commandLine(pid)))
          assert.equal(below.length, 1, `one process below npm: ${below.map(commandLine).join(' | ')}`)
          assert.match(commandLine(below[0] ?? 0), script.runs, 'the process npm starts is the service, no shell in between')

          // The service's process is among those that must be gone.
          await npm.assertStopsOn(signal, { guardMs: EXIT_GUARD_MS, below, ports })
        } finally {
          // Only when the test failed: nothing of this run may outlive it.
          npm.kill(below)
        }
      })
    }
  }
})
