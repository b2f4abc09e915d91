// Graceful shutdown of the built executable: SIGTERM at either
// tier lets requests in flight finish with 200 and exits 0; once the only upstream is gone the
// front answers the mapped 502 at once; `serve` closes the front first, then the post API.
// Needs `npm run build` (npm test builds first).
//
// Slow requests without a fake: the post API reads a SQLite file in rollback-journal mode, and the
// test holds an EXCLUSIVE lock on it for a second, so each read waits for it (the store's busy
// time-out is 2 s). better-sqlite3 waits synchronously, so the post API serves one request at a
// time: the others wait on their keep-alive connections, already sent, which is in flight too.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, test } from 'node:test'
import Database from 'better-sqlite3'
import { startCli, startClis, type RunningCli } from '../helpers/cli.js'
import { seedTestStore } from '../helpers/databases.js'
import { freePort, json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { get, type TestResponse } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'

/** Four distinct upstream calls (identical concurrent ones would be coalesced into one). */
const PATHS = ['/api/blog/hello-world', '/api/blog/two-tiers', '/api/blog/slugs-and-stores', '/api/blog']

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-shutdown-'))
const database = join(dir, 'blog.db')
let editor: Database.Database

before(async () => {
  await seedTestStore({ dialect: 'sqlite', filename: database })
  editor = new Database(database)
  // Rollback journal: an EXCLUSIVE lock keeps readers out (in WAL mode they would read on).
  editor.pragma('journal_mode = DELETE')
})
after(() => {
  editor.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Holds the write lock for `ms`, starting now. */
function lockStoreFor (ms: number): Promise<void> {
  editor.exec('BEGIN EXCLUSIVE')
  return sleep(ms).then(() => { editor.exec('COMMIT') })
}

/** Everything a child wrote after start-up, for failure messages (a crash explains itself). */
const outputs = new Map<RunningCli, string>()
function record (running: RunningCli): RunningCli {
  outputs.set(running, '')
  const append = (chunk: Buffer): void => { outputs.set(running, (outputs.get(running) ?? '') + chunk.toString()) }
  running.child.stdout?.on('data', append)
  running.child.stderr?.on('data', append)
  return running
}
const outputOf = (running: RunningCli): string => `its output:\n${outputs.get(running) ?? ''}`

async function exitOf (running: RunningCli): Promise<{ code: number | null }> {
  const { child } = running
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode }
  const [code] = await once(child, 'exit') as [number | null]
  return { code }
}

async function refused (url: string): Promise<boolean> {
  const { port, hostname } = new URL(url)
  return await new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => { socket.destroy(); resolve(false) })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'))
  })
}

/** A post API and a front calling it, started side by side (the front needs no upstream to start). */
async function startPostsApiAndFront (): Promise<{ posts: RunningCli, front: RunningCli }> {
  const postsPort = String(await freePort())
  const [posts, front] = await startClis(
    // The test blocks this process's event loop on purpose (the store's busy wait): no load shedding.
    [['posts-api'], { DATABASE_URL: database, POSTS_PORT: postsPort, LOAD_SHED_DELAY_MS: '0' }, ['posts']],
    [['front', '--api-url', `http://127.0.0.1:${postsPort}`, '--blog-port', '0'], { SHUTDOWN_TIMEOUT_MS: '5000' }, ['front']]
  )
  if (posts === undefined || front === undefined) throw new Error('both started')
  return { posts: record(posts), front: record(front) }
}

/** Sends every path (with `query`) at once through the front; resolves to the answers, each with when it came. */
const sendAll = async (front: RunningCli, query = ''): Promise<Array<TestResponse & { at: number }>> =>
  await Promise.all(PATHS.map(async (path) => ({ ...await get(front.urls.front ?? '', path + query), at: performance.now() })))

/** All 200, and all answered after `signalledAt`: they were in flight when the signal came. */
function assertCompletedAfter (answers: Array<TestResponse & { at: number }>, signalledAt: number): void {
  assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200])
  for (const answer of answers) assert.ok(answer.at > signalledAt, 'answered after the signal')
}

test('SIGTERM to the front with requests in flight: they complete with 200, exit 0 within the shutdown time-out', { timeout: 20_000 }, async () => {
  const { posts, front } = await startPostsApiAndFront()
  try {
    const unlocked = lockStoreFor(1000)
    const inFlight = sendAll(front)
    await sleep(300)
    const signalledAt = performance.now()
    front.child.kill('SIGTERM')
    await sleep(100)
    assert.ok(await refused(front.urls.front ?? ''), 'a closing front accepts no new connection')
    await unlocked
    assertCompletedAfter(await inFlight, signalledAt)
    // Past SHUTDOWN_TIMEOUT_MS (5 s) the process exits 1: exit 0 is within it.
    assert.equal((await exitOf(front)).code, 0, outputOf(front))
    // The post API was not disturbed.
    assert.equal((await get(posts.urls.posts ?? '', '/api/posts')).status, 200)
  } finally {
    await front.stop()
    assert.equal(await posts.stop(), 0, outputOf(posts))
  }
})

test('SIGTERM to the post API while the front relays requests from it: 200, exit 0; then the front answers 502 at once', { timeout: 20_000 }, async () => {
  const { posts, front } = await startPostsApiAndFront()
  try {
    // One keep-alive connection per path from the front to the post API, so that the requests in
    // flight are all written to connections the post API has already accepted. They ask for
    // queries the front holds no copy of: each is a call of its own (not one version read that
    // the others would wait for, and then find the post API gone).
    assert.deepEqual((await sendAll(front)).map((r) => r.status), [200, 200, 200, 200])
    const unlocked = lockStoreFor(1000)
    const inFlight = sendAll(front, '?fields=slug,title')
    await sleep(300)
    const signalledAt = performance.now()
    posts.child.kill('SIGTERM')
    await unlocked
    assertCompletedAfter(await inFlight, signalledAt)
    assert.equal((await exitOf(posts)).code, 0, outputOf(posts))

    // The only upstream is gone: every request gets the mapped 502, none hangs until the upstream
    // time-out (10 s): half of it is a margin no busy machine needs for 10 refused connections.
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => await get(front.urls.front ?? '', PATHS[i % PATHS.length] ?? '/api/blog')))
    const elapsed = performance.now() - started
    for (const response of answers) assertProblem(response, 'upstream-unreachable')
    assert.ok(elapsed < 5000, `10 requests answered in ${elapsed.toFixed(0)} ms`)
  } finally {
    await posts.stop()
    assert.equal(await front.stop(), 0, outputOf(front))
  }
})

test('serve: SIGTERM closes the front first (the post API still serves while it drains), then the post API; a second signal changes nothing; exit 0', { timeout: 20_000 }, async () => {
  // The front of `serve` may call another upstream (API_URL): a slow fake one keeps its requests
  // in flight without blocking the process, so the order of the two closes can be watched.
  const slow = await startFakeUpstream((req, res) => {
    setTimeout(() => json(res, 200, req.url === '/api/posts' ? [{ slug: 'a' }] : { slug: req.url?.split('/').pop() }), 1000)
  })
  const serve = record(await startCli(['serve'], { DATABASE_URL: database, BLOG_PORT: '0', POSTS_PORT: '0', API_URL: slow.url.href, SHUTDOWN_TIMEOUT_MS: '5000' }, ['front', 'posts']))
  try {
    const inFlight = sendAll(serve)
    await sleep(200)
    const signalledAt = performance.now()
    serve.child.kill('SIGTERM')
    await sleep(200)
    assert.ok(await refused(serve.urls.front ?? ''), 'the front stopped accepting first')
    // The same signal again while closing (a Ctrl-C under npm arrives twice: from the terminal,
    // and forwarded by npm) changes nothing.
    serve.child.kill('SIGTERM')
    assert.equal((await get(serve.urls.posts ?? '', '/api/posts')).status, 200, 'the post API still serves while the front drains')
    assertCompletedAfter(await inFlight, signalledAt)
    assert.equal((await exitOf(serve)).code, 0, outputOf(serve))
    assert.ok(await refused(serve.urls.posts ?? ''), 'then the post API closed too')
  } finally {
    await serve.stop()
    await slow.close()
  }
})
