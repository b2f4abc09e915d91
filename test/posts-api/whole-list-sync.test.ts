// The whole list of the sync route (`GET /api/posts/changes` without `since`) over real HTTP: at
// most MAX_WHOLE_LISTS stream at once per process, each holding its turn while its client does
// not read, the next refused with 503 `overloaded`; a turn is given back when its list ends,
// fails, or its client leaves mid-stream. A failure to observe the state a list names afterwards
// is logged, and the answer stays whole.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { test, type TestContext } from 'node:test'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { MAX_WHOLE_LISTS, WHOLE_LIST_RETRY_AFTER_S } from '../../src/posts-api/changes-route.js'
import type { StoreLocation } from '../../src/config.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { StoreUnavailableError, type PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore, SERVERS, seedTestStore, type TestDatabase } from '../helpers/databases.js'
import { logSink } from '../helpers/log-sink.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { get } from '../helpers/http.js'
import { listen, silentLogger, type RunningApp } from '../helpers/tiers.js'

const CHANGES = '/api/posts/changes'
/** A post's content: one post is more than a chunk of the stream (64 KiB), which is sent as soon as it is read. */
const BIG = 65_536

/** `store`, with `override`'s methods in place of its own. */
function overriding (store: PostStore, override: Partial<PostStore>): PostStore {
  return new Proxy(store, {
    get (target, name) {
      if (Object.hasOwn(override, name)) return Reflect.get(override, name)
      const value: unknown = Reflect.get(target, name, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

/** `count` characters of `x`, in the dialect's SQL. */
const REPEAT: Record<StoreLocation['dialect'], (count: number) => string> = {
  sqlite: (count) => `printf('%.*c', ${count}, 'x')`,
  postgres: (count) => `repeat('x', ${count})`,
  mysql: (count) => `REPEAT('x', ${count})`
}

/** Adds `count` posts of BIG characters each, the first in the list order (published latest). */
async function addBigPosts (database: TestDatabase, count: number): Promise<void> {
  const { dialect } = database.location
  const publishedAt = dialect === 'mysql' ? '2099-01-01 00:00:00' : '2099-01-01T00:00:00.000Z'
  const rows = Array.from({ length: count }, (_, i) => `('big-${i + 1}', 'Big', ${REPEAT[dialect](BIG)}, '[]', '${publishedAt}')`)
  await database.exec(`INSERT INTO posts (slug, title, content, tags, published_at) VALUES ${rows.join(', ')}`)
}

/** A post API over `database`; `override(store)` replaces some of its store's methods. */
async function startPostsApi (t: TestContext, database: TestDatabase, override: (store: PostStore) => Partial<PostStore> = () => ({})): Promise<RunningApp> {
  const opened = await openTestStore(database.location)
  await opened.checkSchema()
  const posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store: overriding(opened, override(opened)), logger: silentLogger })))
  t.after(async () => { await posts.app.close(); await opened.close() })
  return posts
}

interface Unread { status: number, socket: Socket }

/**
 * GETs whose answer's head is read, then nothing more: once the sockets' buffers are full, the
 * server's stream waits. Their sockets are destroyed after the test: make this before the server
 * (hooks run in the order they were added), whose close waits for its answers to end.
 */
function clientsThatDoNotRead (t: TestContext): (port: number, path: string) => Promise<Unread> {
  const sockets: Socket[] = []
  t.after(() => { for (const socket of sockets) socket.destroy() })
  return async (port, path) => {
    const socket = connect(port, '127.0.0.1')
    sockets.push(socket)
    await once(socket, 'connect')
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    const head = await new Promise<string>((resolve, reject) => {
      let text = ''
      const onData = (chunk: Buffer): void => {
        text += chunk.toString('latin1')
        const end = text.indexOf('\r\n\r\n')
        if (end === -1) return
        socket.off('data', onData)
        socket.pause()
        resolve(text.slice(0, end))
      }
      socket.on('data', onData)
      socket.once('error', reject)
    })
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), socket }
  }
}

for (const [name, server] of SERVERS) {
  test(`${name}: at most ${MAX_WHOLE_LISTS} whole lists stream at once, held by clients that do not read; the next is 503 overloaded; a client leaving gives its turn back`, { skip: server.skip }, async (t) => {
    // First, so that its clients leave first after the test: MySQL/MariaDB drops a database only
    // once no query reads it, and their lists' queries end when they do.
    const requestWithoutReading = clientsThatDoNotRead(t)
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    // About 25 MB: far more than the sockets between a stalled client and the server buffer.
    await addBigPosts(database, 384)
    const posts = await startPostsApi(t, database)

    const held: Unread[] = []
    for (let i = 0; i < MAX_WHOLE_LISTS; i++) held.push(await requestWithoutReading(posts.port, CHANGES))
    assert.deepEqual(held.map(({ status }) => status), Array(MAX_WHOLE_LISTS).fill(200))
    // Checked first without reading: a list let through would be some 25 MB of failure message.
    assert.equal((await requestWithoutReading(posts.port, CHANGES)).status, 503, 'the next whole list is refused')
    const refused = await get(posts.url, CHANGES)
    assertProblem(refused, 'overloaded')
    assert.equal(refused.headers['retry-after'], String(WHOLE_LIST_RETRY_AFTER_S))
    // Other answers do not wait for a whole list.
    assert.equal((await get(posts.url, '/api/post/hello-world')).status, 200)

    // A client leaves mid-stream: its turn comes back (the server notices it a moment later).
    held.shift()?.socket.destroy()
    const next = await pollUntil('a turn given back by the client that left', async () => {
      const attempt = await requestWithoutReading(posts.port, CHANGES)
      if (attempt.status === 200) return attempt
      attempt.socket.destroy()
      return undefined
    })
    assert.equal(next.status, 200)
    assert.equal((await requestWithoutReading(posts.port, CHANGES)).status, 503, 'the turn was taken again')
  })
}

test('a turn is given back when its whole list ends, fails mid-stream, or fails before answering', async (t) => {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  await addBigPosts(database, 1)
  let failing: 'no' | 'after the first rows' | 'at once' = 'no'
  const posts = await startPostsApi(t, database, (store) => ({
    async * streamVersionedPosts (query) {
      if (failing === 'at once') throw new StoreUnavailableError('the store went away')
      for await (const batch of store.streamVersionedPosts(query)) {
        yield batch
        if (failing === 'after the first rows') throw new StoreUnavailableError('the store went away mid-list')
      }
    }
  }))
  const whole = async (): Promise<number> => {
    const response = await fetch(`${posts.url}${CHANGES}`)
    await response.text()
    return response.status
  }

  for (let i = 0; i <= MAX_WHOLE_LISTS; i++) assert.equal(await whole(), 200)
  failing = 'after the first rows'
  for (let i = 0; i <= MAX_WHOLE_LISTS; i++) await assert.rejects(whole(), 'the list is cut short')
  failing = 'at once'
  for (let i = 0; i <= MAX_WHOLE_LISTS; i++) assertProblem(await get(posts.url, CHANGES), 'store-unavailable')
  failing = 'no'
  assert.equal(await whole(), 200, 'every turn was given back')
})

test('a whole list whose state cannot be observed afterwards is still answered whole, and the failure is logged at warn', async (t) => {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  const opened = await openTestStore(database.location)
  await opened.checkSchema()
  const failure = new StoreUnavailableError('the row versions could not be read')
  const store = overriding(opened, { readRowVersions: async () => { throw failure } })
  const sink = logSink('warn')
  const posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: sink.logger })))
  t.after(async () => { await posts.app.close(); await opened.close() })

  const response = await fetch(`${posts.url}/api/posts/changes`)
  assert.equal(response.status, 200)
  const body = await response.json() as { upserted: Array<{ slug: string }>, until: string }
  assert.deepEqual(body.upserted.map(({ slug }) => slug).sort(), (await (await fetch(`${posts.url}/api/posts`)).json() as Array<{ slug: string }>).map(({ slug }) => slug).sort())
  const logged = sink.lines.filter((line) => line.level === 40 && line.err?.message === failure.message)
  assert.equal(logged.length, 1, JSON.stringify(sink.lines))
  assert.match(String(logged[0]?.msg), /sync/)
})
