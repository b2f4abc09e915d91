// The executable as users run it: a mistake or a failed start is one clear line and a non-zero
// exit; `serve` on a fresh machine creates, migrates and seeds the embedded default. The command
// line runs in this process (runCliHere) wherever that shows the same; the built executable is
// spawned where the process itself is under test (its exit, its streams, its signals).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { CLI, runCli, runCliHere, startCli, startClis } from '../helpers/cli.js'
import { seedTestStore } from '../helpers/databases.js'
import { freePort } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-cli-'))
const seeded = join(dir, 'seeded.db')
before(async () => { await seedTestStore({ dialect: 'sqlite', filename: seeded }) })
after(() => rmSync(dir, { recursive: true, force: true }))

function assertOneLine (stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, `one line expected, got: ${stderr}`)
  assert.match(lines[0] ?? '', /^blog-read-api: /)
  assert.match(lines[0] ?? '', pattern)
  assert.doesNotMatch(stderr, /\n\s+at |Error:/, 'no stack trace')
}

describe('mistakes stop start-up with one line naming the setting or flag, exit 2', () => {
  const cases: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    ['a port that is not a number', [], { BLOG_PORT: 'abc' }, /^blog-read-api: invalid BLOG_PORT: expected a port number$/],
    ['a port out of range', ['--posts-port', '70000'], {}, /POSTS_PORT/],
    ['an API_URL that is not a URL', ['front'], { API_URL: 'not a url' }, /API_URL/],
    ['an API_URL that is not http', ['front', '--api-url', 'ftp://example.com'], {}, /API_URL/],
    ['the front without API_URL', ['front'], {}, /API_URL/],
    ['an unknown store scheme', [], { DATABASE_URL: 'redis://127.0.0.1/0' }, /DATABASE_URL.*redis/],
    ...(['serve', 'posts-api', 'front', 'migrate', 'seed'] as const).map((command): [string, string[], NodeJS.ProcessEnv, RegExp] =>
      [`an in-memory SQLite database (${command})`, [command], { DATABASE_URL: 'sqlite::memory:', API_URL: 'http://127.0.0.1:1' }, /DATABASE_URL.*in-memory/]),
    ['a time-out that is not a number', [], { UPSTREAM_TIMEOUT_MS: '10s' }, /UPSTREAM_TIMEOUT_MS/],
    ['an unknown log level', ['--log-level', 'loud'], {}, /LOG_LEVEL/],
    ['a slug pattern that is not a regular expression', [], { SLUG_PATTERN: '([a-z' }, /SLUG_PATTERN/],
    ['both tiers of serve on one port', [], { BLOG_PORT: '3000', POSTS_PORT: '3000' }, /^blog-read-api: invalid POSTS_PORT: 3000 is also BLOG_PORT; each listener of `serve` needs its own port/],
    ['the admin listener on the post API\'s port', ['posts-api', '--admin-port', '4001'], { POSTS_PORT: '4001' }, /^blog-read-api: invalid ADMIN_PORT: 4001 is also POSTS_PORT/],
    ['the admin listener on the front\'s port', ['front', '--blog-port', '4000', '--admin-port', '4000'], { API_URL: 'http://127.0.0.1:1' }, /invalid ADMIN_PORT: 4000 is also BLOG_PORT/],
    ['an unknown flag, with the one meant', ['--blog-prot', '3000'], {}, /^blog-read-api: unknown flag --blog-prot \(did you mean --blog-port\?\)$/],
    ['a flag that is part of several', ['--port', '3000'], {}, /^blog-read-api: unknown flag --port \(did you mean --blog-port, --posts-port or --admin-port\?\)$/],
    ['an unknown flag like none', ['--colour', 'red'], {}, /^blog-read-api: unknown flag --colour \(see blog-read-api --help\)$/],
    ['a flag without its value', ['--blog-port'], {}, /^blog-read-api: --blog-port needs a value \(--blog-port PORT, or BLOG_PORT in the environment\)$/],
    ['a switch given a value', ['--help=yes'], {}, /--help takes no value/],
    ['an unknown command', ['launch'], {}, /unknown command "launch"/],
    ['a mistyped command', ['serv'], {}, /^blog-read-api: unknown command "serv" \(did you mean serve\?\)$/],
    ['help for an unknown command', ['help', 'posts'], {}, /unknown command "posts" \(did you mean posts-api\?\)/],
    ['an argument a command does not take', ['migrate', 'now'], {}, /unexpected argument "now" \(see blog-read-api help migrate\)/],
    ['import without files', ['import'], {}, /import needs at least one file or folder/],
    ['--dry-run outside import', ['serve', '--dry-run'], {}, /--dry-run applies to import only/]
  ]
  for (const [name, args, env, pattern] of cases) {
    test(name, async () => {
      const { code, stdout, stderr } = await runCliHere(args, env)
      assert.equal(code, 2)
      assertOneLine(stderr, pattern)
      assert.equal(stdout, '')
    })
  }

  test('the executable itself: one line on stderr, nothing on stdout, exit 2, no stack trace', async () => {
    // A setting mistake found after the serving modules were loaded: the deepest path to exit 2.
    const { code, stdout, stderr } = await runCli(['serve'], { BLOG_PORT: '3000', POSTS_PORT: '3000' })
    assert.equal(code, 2)
    assertOneLine(stderr, /invalid POSTS_PORT: 3000 is also BLOG_PORT/)
    assert.equal(stdout, '')
  })
})

describe('store errors at start-up: one line, exit 1', () => {
  test('a SQLite file the user names that does not exist is reported as missing, with what creates it, and not created', async () => {
    const filename = join(dir, 'absent.db')
    const { code, stderr } = await runCliHere(['posts-api', '--posts-port', '0'], { DATABASE_URL: filename })
    assert.equal(code, 1)
    assertOneLine(stderr, new RegExp(`the SQLite file ${filename} \\(DATABASE_URL\\) does not exist; \`blog-read-api migrate\` creates it .* or unset DATABASE_URL to serve the embedded default ./data/blog.db$`))
    assert.equal(existsSync(filename), false)
  })

  test('seed into a SQLite file that does not exist: reported, with what creates it, and not created', async () => {
    const filename = join(dir, 'unseeded.db')
    const { code, stderr } = await runCliHere(['seed'], { DATABASE_URL: filename })
    assert.equal(code, 1)
    assertOneLine(stderr, new RegExp(`^blog-read-api: cannot seed: the SQLite file ${filename} \\(DATABASE_URL\\) does not exist; \`blog-read-api migrate\` creates it$`))
    assert.equal(existsSync(filename), false)
  })

  test('a database without a posts table is reported', async () => {
    const filename = join(dir, 'empty.db')
    new Database(filename).exec('CREATE TABLE other (id INTEGER)')
    const { code, stderr } = await runCliHere(['posts-api', '--posts-port', '0'], { DATABASE_URL: `sqlite:${filename}` })
    assert.equal(code, 1)
    assertOneLine(stderr, /no `posts` table/)
  })

  test('a posts table without a slug column is reported', async () => {
    const filename = join(dir, 'noslug.db')
    new Database(filename).exec('CREATE TABLE posts (id INTEGER, title TEXT)')
    const { code, stderr } = await runCliHere(['serve', '--blog-port', '0', '--posts-port', '0'], { DATABASE_URL: filename })
    assert.equal(code, 1)
    assertOneLine(stderr, /no `slug` column/)
  })

  test('an unreachable PostgreSQL server is reported, and the password never printed', async () => {
    const { code, stderr } = await runCliHere(['posts-api'], { DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${await freePort()}/blog` })
    assert.equal(code, 1)
    assertOneLine(stderr, /ECONNREFUSED/)
    assert.doesNotMatch(stderr, /secret/)
  })
})

describe('a port in use is a line naming its setting, exit 1; what had started is closed', () => {
  let busy: Server
  let busyPort: number
  before(async () => {
    busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    busyPort = (busy.address() as { port: number }).port
  })
  after(() => { busy.close() })

  /** Whether `port` can be listened on again (nothing of ours holds it). */
  async function isFree (port: number): Promise<boolean> {
    const probe = createServer()
    return await new Promise((resolve) => {
      probe.once('error', () => resolve(false))
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
    })
  }

  test('the post API\'s start-up log says which way search runs', async () => {
    const { code, log } = await runCliHere(['posts-api', '--posts-port', String(busyPort)], { DATABASE_URL: seeded, METRICS: 'off' })
    assert.equal(code, 1)
    assert.match(log, /search \(q\) runs on an in-memory index of title, summary, content that this process fills at the first search/)
  })

  for (const [setting, args] of [
    ['BLOG_PORT', (busy: number, free: number) => ['serve', '--blog-port', String(busy), '--posts-port', String(free)]],
    ['POSTS_PORT', (busy: number, free: number) => ['serve', '--blog-port', String(free), '--posts-port', String(busy)]],
    ['ADMIN_PORT', (busy: number, free: number) => ['posts-api', '--posts-port', String(free), '--admin-port', String(busy)]]
  ] as const) {
    test(setting, async () => {
      const free = await freePort()
      const { code, stderr } = await runCliHere(args(busyPort, free), { DATABASE_URL: seeded, METRICS: 'off', LOG_LEVEL: 'silent' })
      assert.equal(code, 1)
      const flag = `--${setting.toLowerCase().replace('_', '-')}`
      assertOneLine(stderr, new RegExp(`^blog-read-api: cannot start: port ${busyPort} \\(${setting}\\) on 127.0.0.1 is in use by another process; stop it, or set another with ${setting} or ${flag}$`))
      assert.ok(await isFree(free), 'the listener that had started was closed')
    })
  }
})

describe('serving', () => {
  test('serve on a fresh machine creates, migrates and seeds ./data/blog.db and serves it', async () => {
    const cwd = mkdtempSync(join(dir, 'fresh-'))
    const running = await startCli(['--blog-port', '0', '--posts-port', '0', '--log-level', 'info'], {}, ['front', 'posts'], cwd)
    try {
      assert.ok(existsSync(join(cwd, 'data', 'blog.db')))
      const list = await get(running.urls.front ?? '', '/api/blog')
      assert.equal(list.status, 200)
      assert.deepEqual((list.json() as Array<{ slug: string }>).map((p) => p.slug), ['slugs-and-stores', 'two-tiers', 'hello-world'])
      assert.equal((await get(running.urls.front ?? '', '/api/blog/hello-world')).status, 200)
    } finally {
      assert.equal(await running.stop(), 0, 'SIGTERM closes both tiers and exits 0')
    }
  })

  test('migrate, seed, then posts-api and front as separate processes', async () => {
    const filename = join(dir, 'split.db')
    const migrated = await runCliHere(['migrate'], { DATABASE_URL: filename })
    assert.equal(migrated.code, 0)
    assert.match(migrated.log, /the posts table is ready in sqlite:/)
    // The search index, only when asked for: the one write search makes.
    const indexed = await runCliHere(['migrate', '--search'], { DATABASE_URL: filename })
    assert.equal(indexed.code, 0)
    assert.match(indexed.log, /added [^"]*table posts_search\b/)
    const seededNow = await runCliHere(['seed'], { DATABASE_URL: filename })
    assert.equal(seededNow.code, 0)
    assert.match(seededNow.log, /inserted 3 sample posts/)
    // Side by side: the front needs no upstream to start.
    const postsPort = String(await freePort())
    const [posts, front] = await startClis(
      [['posts-api'], { DATABASE_URL: filename, POSTS_PORT: postsPort }, ['posts']],
      [['front', '--api-url', `http://127.0.0.1:${postsPort}`, '--blog-port', '0'], {}, ['front']]
    )
    assert.ok(posts !== undefined && front !== undefined)
    try {
      const response = await get(front.urls.front ?? '', '/api/blog/two-tiers', { 'x-request-id': 'cli-test-1' })
      assert.equal(response.status, 200)
      assert.equal(response.headers['x-request-id'], 'cli-test-1')
    } finally {
      assert.equal(await front.stop(), 0)
      assert.equal(await posts.stop(), 0)
    }
  })
})

// The machine's own Node where it is a line the service does not run on (Debian's 20): the
// executable still loads there, and says in one line which Node it needs.
const MACHINE_NODE = '/usr/bin/node'
const machineLine = existsSync(MACHINE_NODE) ? spawnSync(MACHINE_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim() : ''
test('on Node 20, serve stops with one line naming the Node it needs, exit 1, no stack', {
  skip: machineLine.startsWith('v20.') ? false : `${MACHINE_NODE} is not Node 20 (${machineLine === '' ? 'none' : machineLine})`
}, () => {
  const cwd = mkdtempSync(join(dir, 'node-20-'))
  const { status, stderr } = spawnSync(MACHINE_NODE, [CLI, 'serve'], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME }, timeout: 10_000 })
  assert.equal(status, 1)
  assertOneLine(stderr, /SQLite needs Node\.js 22\.14 or newer \(Node-API 10\); this is Node\.js v20\./)
})
