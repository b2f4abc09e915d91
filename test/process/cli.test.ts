// The executable as users run it: start-up errors are one clear line and a non-zero exit;
// `serve` on a fresh machine creates, migrates and seeds the embedded default.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { runCli, startCli } from '../helpers/cli.js'
import { freePort } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-cli-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function assertOneLine (stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, `one line expected, got: ${stderr}`)
  assert.match(lines[0] ?? '', /^blog-read-api: /)
  assert.match(lines[0] ?? '', pattern)
  assert.doesNotMatch(stderr, /\n\s+at |Error:/, 'no stack trace')
}

describe('configuration errors stop start-up with one line naming the setting', () => {
  const cases: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    ['a port that is not a number', [], { BLOG_PORT: 'abc' }, /BLOG_PORT/],
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
    ['an unknown flag', ['--colour', 'red'], {}, /--colour/],
    ['an unknown command', ['launch'], {}, /unknown command "launch"/]
  ]
  for (const [name, args, env, pattern] of cases) {
    test(name, async () => {
      const { code, stderr } = await runCli(args, env)
      assert.equal(code, 2)
      assertOneLine(stderr, pattern)
    })
  }
})

describe('store errors at start-up', () => {
  test('a SQLite file the user names that does not exist is reported, and not created', async () => {
    const filename = join(dir, 'absent.db')
    const { code, stderr } = await runCli(['posts-api', '--posts-port', '0'], { DATABASE_URL: filename })
    assert.equal(code, 1)
    assertOneLine(stderr, /unable to open database file/)
    assert.equal(existsSync(filename), false)
  })

  test('a database without a posts table is reported', async () => {
    const filename = join(dir, 'empty.db')
    new Database(filename).exec('CREATE TABLE other (id INTEGER)')
    const { code, stderr } = await runCli(['posts-api', '--posts-port', '0'], { DATABASE_URL: `sqlite:${filename}` })
    assert.equal(code, 1)
    assertOneLine(stderr, /no `posts` table/)
  })

  test('a posts table without a slug column is reported', async () => {
    const filename = join(dir, 'noslug.db')
    new Database(filename).exec('CREATE TABLE posts (id INTEGER, title TEXT)')
    const { code, stderr } = await runCli(['serve', '--blog-port', '0', '--posts-port', '0'], { DATABASE_URL: filename })
    assert.equal(code, 1)
    assertOneLine(stderr, /no `slug` column/)
  })

  test('an unreachable PostgreSQL server is reported quickly', async () => {
    const started = Date.now()
    const { code, stderr } = await runCli(['posts-api'], { DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${await freePort()}/blog` })
    assert.equal(code, 1)
    assertOneLine(stderr, /ECONNREFUSED/)
    assert.doesNotMatch(stderr, /secret/, 'the password is never printed')
    assert.ok(Date.now() - started < 5000)
  })
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
    assert.equal((await runCli(['migrate'], { DATABASE_URL: filename })).code, 0)
    assert.equal((await runCli(['seed'], { DATABASE_URL: filename })).code, 0)
    const posts = await startCli(['posts-api'], { DATABASE_URL: filename, POSTS_PORT: '0' }, ['posts'])
    const front = await startCli(['front', '--api-url', posts.urls.posts ?? '', '--blog-port', '0'], {}, ['front'])
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
