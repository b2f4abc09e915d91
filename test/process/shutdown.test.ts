// Graceful shutdown of the built executable: SIGTERM at either
// tier lets requests in flight finish with 200 and exits 0; once the only upstream is gone the
// front answers the mapped 502 at once; `serve` closes the front first, then the post API.
// Needs a current build (`npm ci` builds; after editing src/, `npm run build`).
//
// Requests are held in flight by the test, for as long as it needs, never for a fixed time: at
// the front, by a fake upstream that answers once the test lets it; at the post API, by an
// EXCLUSIVE lock the test holds on its SQLite file (rollback-journal mode), so that a read waits
// for it. better-sqlite3 waits synchronously, so the post API serves one request at a time: the
// others wait, unread, on their keep-alive connections, which the test sees in the kernel's
// receive queues. The lock is given back as soon as the signal is sent (the store's busy time-out
// is 2 s).
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import Database from 'better-sqlite3'
import { startCli, startClis, type RunningCli } from '../helpers/cli.js'
import { seedTestStore } from '../helpers/databases.js'
import { freePort, json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { get, type TestResponse } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
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

/** Takes the write lock, until the function it returns is first called. */
function lockStore (): () => void {
  editor.exec('BEGIN EXCLUSIVE')
  return () => { if (editor.inTransaction) editor.exec('COMMIT') }
}

/**
 * Connections to `port` on this machine holding bytes their listener has not read (Linux: the
 * receive queues in /proc/net/tcp and tcp6): requests waiting at a process that is busy.
 */
function unreadConnectionsAt (port: number): number {
  let count = 0
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue …; addresses and queues in hex.
      const [, local = '', , state, queues = ''] = line.trim().split(/\s+/)
      if (Number.parseInt(local.split(':')[1] ?? '', 16) === port && state === '01' && Number.parseInt(queues.split(':')[1] ?? '', 16) > 0) count++
    }
  }
  return count
}

/** A fake post API that holds every answer until `release` (and answers at once from then on). */
async function startHoldingUpstream (): Promise<{ upstream: FakeUpstream, release: () => void }> {
  const held: Array<() => void> = []
  let holding = true
  const upstream = await startFakeUpstream((req, res) => {
    const answer = (): void => json(res, 200, req.url === '/api/posts' ? [{ slug: 'a' }] : { slug: req.url?.split('/').pop() })
    if (holding) held.push(answer)
    else answer()
  })
  return {
    upstream,
    release: () => {
      holding = false
      for (const answer of held.splice(0)) answer()
    }
  }
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
  const { upstream, release } = await startHoldingUpstream()
  const front = record(await startCli(['front', '--api-url', upstream.url.href, '--blog-port', '0'], { SHUTDOWN_TIMEOUT_MS: '5000' }, ['front']))
  try {
    const inFlight = sendAll(front)
    await pollUntil('every request relayed to the upstream', () => upstream.requests.length >= PATHS.length)
    const signalledAt = performance.now()
    front.child.kill('SIGTERM')
    await pollUntil('a closing front accepts no new connection', async () => await refused(front.urls.front ?? ''))
    release()
    assertCompletedAfter(await inFlight, signalledAt)
    // Past SHUTDOWN_TIMEOUT_MS (5 s) the process exits 1: exit 0 is within it.
    assert.equal((await exitOf(front)).code, 0, outputOf(front))
  } finally {
    release()
    await front.stop()
    await upstream.close()
  }
})

test('SIGTERM to the post API while the front relays requests from it: 200, exit 0; then the front answers 502 at once', { timeout: 20_000 }, async () => {
  const { posts, front } = await startPostsApiAndFront()
  let unlock = (): void => {}
  try {
    // One keep-alive connection per path from the front to the post API, so that the requests in
    // flight are all written to connections the post API has already accepted. They ask for
    // queries the front holds no copy of: each is a call of its own (not one version read that
    // the others would wait for, and then find the post API gone).
    assert.deepEqual((await sendAll(front)).map((r) => r.status), [200, 200, 200, 200])
    unlock = lockStore()
    const inFlight = sendAll(front, '?fields=slug,title')
    // One is read, and its store read waits for the lock; the other three wait unread.
    await pollUntil('the requests in the post API\'s hands', () => unreadConnectionsAt(Number(new URL(posts.urls.posts ?? '').port)) >= PATHS.length - 1)
    const signalledAt = performance.now()
    posts.child.kill('SIGTERM')
    unlock()
    assertCompletedAfter(await inFlight, signalledAt)
    assert.equal((await exitOf(posts)).code, 0, outputOf(posts))

    // The only upstream is gone: every request gets the mapped 502 (connection refused) at once;
    // one that waited for the upstream time-out would get the 504 time-out problem instead.
    const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => await get(front.urls.front ?? '', PATHS[i % PATHS.length] ?? '/api/blog')))
    for (const response of answers) assertProblem(response, 'upstream-unreachable')
  } finally {
    unlock()
    await posts.stop()
    assert.equal(await front.stop(), 0, outputOf(front))
  }
})

test('serve: SIGTERM closes the front first (the post API still serves while it drains), then the post API; a second signal changes nothing; exit 0', { timeout: 20_000 }, async () => {
  // The front of `serve` may call another upstream (API_URL): a fake one that holds its answers
  // keeps the front's requests in flight without blocking the process, so the order of the two
  // closes can be watched.
  const { upstream, release } = await startHoldingUpstream()
  const serve = record(await startCli(['serve'], { DATABASE_URL: database, BLOG_PORT: '0', POSTS_PORT: '0', API_URL: upstream.url.href, SHUTDOWN_TIMEOUT_MS: '5000' }, ['front', 'posts']))
  try {
    const inFlight = sendAll(serve)
    await pollUntil('every request relayed to the upstream', () => upstream.requests.length >= PATHS.length)
    const signalledAt = performance.now()
    serve.child.kill('SIGTERM')
    await pollUntil('the front stopped accepting first', async () => await refused(serve.urls.front ?? ''))
    // The same signal again while closing (a Ctrl-C under npm arrives twice: from the terminal,
    // and forwarded by npm) changes nothing.
    serve.child.kill('SIGTERM')
    assert.equal((await get(serve.urls.posts ?? '', '/api/posts')).status, 200, 'the post API still serves while the front drains')
    release()
    assertCompletedAfter(await inFlight, signalledAt)
    assert.equal((await exitOf(serve)).code, 0, outputOf(serve))
    assert.ok(await refused(serve.urls.posts ?? ''), 'then the post API closed too')
  } finally {
    release()
    await serve.stop()
    await upstream.close()
  }
})
