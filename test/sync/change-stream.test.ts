// The live change stream over real tiers on every store: an event follows a commit, at the post
// API and at the front; the front holds one upstream stream whatever its number of clients and
// resumes it on another upstream when one goes; a client resuming after a restart of the post API
// or of the front gets the gap or `sync-expired`, or at the head an `id:` alone naming it; a
// heartbeat comment every 15 s (injected timers).
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildPostsApp, type PostsAppOptions } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { SYNC_EXPIRED_EVENT } from '../../src/sync/sse-frame.js'
import type { ParsedEvent } from '../../src/sync/sse-parser.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, SERVERS, seedTestStore, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { createManualTimers } from '../helpers/manual-timers.js'
import { pollUntil } from '../helpers/poll.js'
import { openStreamClient, type StreamClient } from '../helpers/sse-client.js'
import { listen, silentLogger, startFront, type RunningApp } from '../helpers/tiers.js'

const insert = (slug: string): string => `INSERT INTO posts (slug, title, content, tags) VALUES ('${slug}', '${slug}', 'Body', '[]')`

/** A post API over `database` (its own store), counting the change streams it was asked for. */
async function startPostsApi (t: TestContext, database: TestDatabase, options: Partial<PostsAppOptions> = {}): Promise<RunningApp & { streams: () => number }> {
  const store = await openTestStore(database.location)
  await store.checkSchema()
  const app: FastifyInstance = buildPostsApp({ ...postsAppOptions(testConfig(), { store, logger: silentLogger }), ...options })
  let streams = 0
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.url.startsWith('/api/posts/changes') && request.headers.accept === 'text/event-stream') streams++
    done()
  })
  app.addHook('onClose', async () => await store.close())
  const running = await listen(app)
  t.after(() => app.close())
  return { ...running, streams: () => streams }
}

async function follow (t: TestContext, url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  const client = await openStreamClient(url, headers)
  t.after(() => client.close())
  assert.equal(client.status, 200)
  assert.match(String(client.headers['content-type']), /^text\/event-stream/)
  return client
}

const changeOf = (data: string | undefined): { since: string, until: string, upserted: string[], deleted: string[] } => JSON.parse(data ?? 'null')

function describeStream (name: string, server: TestServer): void {
  test(`${name}: an event follows a commit at both tiers; the front holds one upstream stream for all its clients`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    const posts = await startPostsApi(t, database)
    const front = await startFront(new URL(posts.url))
    t.after(() => front.app.close())
    const direct = await follow(t, `${posts.url}/api/posts/changes`)
    const clients = await Promise.all(Array.from({ length: 5 }, async () => await follow(t, `${front.url}/api/changes`)))
    // Each learns the state it joined at (an id alone), then the change.
    await direct.waitFor((event) => event.lastEventId !== '')
    for (const client of clients) await client.waitFor((event) => event.lastEventId !== '')
    await database.exec(insert('streamed'))
    const event = await direct.waitFor((e) => e.data !== undefined)
    assert.deepEqual(changeOf(event.data).upserted, ['streamed'])
    for (const client of clients) {
      const relayed = await client.waitFor((e) => e.data !== undefined)
      assert.equal(relayed.lastEventId, event.lastEventId, 'the same token at both tiers')
      assert.equal(relayed.data, event.data)
    }
    assert.equal(posts.streams(), 2, 'one stream of the test, one of the front for its five clients')
  })

  test(`${name}: resuming after a restart gives the gap, or sync-expired when the state is not held`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    const first = await startPostsApi(t, database)
    const client = await follow(t, `${first.url}/api/posts/changes`)
    await database.exec(insert('before-restart'))
    const seen = await client.waitFor((e) => e.data !== undefined)
    await first.app.close()
    await client.ended

    // Nothing written meanwhile: the restarted process names the same state, and goes on from it.
    const second = await startPostsApi(t, database)
    const resumed = await follow(t, `${second.url}/api/posts/changes`, { 'last-event-id': seen.lastEventId })
    await database.exec(insert('after-restart'))
    const gap = await resumed.waitFor((e) => e.data !== undefined)
    assert.equal(changeOf(gap.data).since, seen.lastEventId)
    assert.deepEqual(changeOf(gap.data).upserted, ['after-restart'])
    await second.app.close()
    await resumed.ended

    // Written while no process ran: a state the new process never saw.
    await database.exec(insert('while-down'))
    const third = await startPostsApi(t, database)
    const expired = await follow(t, `${third.url}/api/posts/changes`, { 'last-event-id': seen.lastEventId })
    const event = await expired.waitFor((e) => e.type === SYNC_EXPIRED_EVENT)
    assert.match(event.data ?? '', /"status":410/)
    const { body } = await fetch(`${third.url}/api/posts/changes`).then(async (r) => ({ body: await r.json() as { until: string } }))
    assert.equal(event.lastEventId, body.until, 'the event names the state to start again from')
  })
}

for (const [name, server] of SERVERS) describeStream(name, server)

test('the front resumes its one upstream stream on another upstream when one goes', async (t) => {
  const database = await sqliteServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  const a = await startPostsApi(t, database)
  const b = await startPostsApi(t, database)
  const front = await startFront([new URL(a.url), new URL(b.url)])
  t.after(() => front.app.close())
  const client = await follow(t, `${front.url}/api/changes`)
  await client.waitFor((event) => event.lastEventId !== '')
  const holder = a.streams() === 1 ? a : b
  const other = holder === a ? b : a
  await holder.app.close()
  await pollUntil('the front follows the other upstream', () => other.streams() >= 1)
  await database.exec(insert('after-failover'))
  const event = await client.waitFor((e) => e.data !== undefined)
  assert.deepEqual(changeOf(event.data).upserted, ['after-failover'])
})

/**
 * A post API over a seeded SQLite database, and a client of a front that then closed, with the
 * last event it got: the `id` alone it joined with, or, after `write`, that change's event.
 */
async function clientOfClosedFront (t: TestContext, write?: string): Promise<{ database: TestDatabase, posts: RunningApp & { streams: () => number }, last: ParsedEvent }> {
  const database = await sqliteServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  const posts = await startPostsApi(t, database)
  const front = await startFront(new URL(posts.url))
  const client = await follow(t, `${front.url}/api/changes`)
  let last = await client.waitFor((event) => event.lastEventId !== '')
  if (write !== undefined) {
    await database.exec(write)
    last = await client.waitFor((event) => event.data !== undefined)
  }
  await front.app.close()
  await client.ended
  return { database, posts, last }
}

test('a front that restarted resumes its client from its Last-Event-ID: the gap when the post API holds that state, else sync-expired', async (t) => {
  const { database, posts, last: seen } = await clientOfClosedFront(t, insert('before-restart'))

  // Written while no front ran: the post API holds the client's state, and answers its gap.
  await database.exec(insert('while-front-down'))
  const second = await startFront(new URL(posts.url))
  t.after(() => second.app.close())
  const resumed = await follow(t, `${second.url}/api/changes`, { 'last-event-id': seen.lastEventId })
  const gap = await resumed.waitFor((e) => e.data !== undefined || e.type === SYNC_EXPIRED_EVENT)
  assert.equal(gap.type, 'message', 'the gap, not sync-expired')
  assert.deepEqual(changeOf(gap.data), { since: seen.lastEventId, until: gap.lastEventId, upserted: ['while-front-down'], deleted: [] })
  await database.exec(insert('after-restart'))
  const live = await resumed.waitFor((e) => e.data !== undefined && e.lastEventId !== gap.lastEventId)
  assert.deepEqual([changeOf(live.data).since, changeOf(live.data).upserted], [gap.lastEventId, ['after-restart']])
  assert.equal(posts.streams(), 2, 'one upstream stream per front process')

  // A state the post API does not hold: sync-expired naming the state to start again from.
  const third = await startFront(new URL(posts.url))
  t.after(() => third.app.close())
  const stranger = await follow(t, `${third.url}/api/changes`, { 'last-event-id': 'A'.repeat(22) })
  const expired = await stranger.waitFor((e) => e.type === SYNC_EXPIRED_EVENT)
  assert.equal(expired.lastEventId, live.lastEventId)
})

test('a front that restarted tells its client resuming at the head where it is, with an id alone, then sends the next change', async (t) => {
  const { database, posts, last: joined } = await clientOfClosedFront(t)

  // Nothing written meanwhile: the client is at the head the post API holds.
  const second = await startFront(new URL(posts.url))
  t.after(() => second.app.close())
  const resumed = await follow(t, `${second.url}/api/changes`, { 'last-event-id': joined.lastEventId })
  const told = await pollUntil('the client is told where it is', () => resumed.events.find((event) => event.lastEventId !== ''))
  assert.deepEqual([told.lastEventId, told.data], [joined.lastEventId, undefined])
  await database.exec(insert('after-restart'))
  const live = await resumed.waitFor((event) => event.data !== undefined)
  assert.deepEqual([changeOf(live.data).since, changeOf(live.data).upserted], [joined.lastEventId, ['after-restart']])
})

test('a heartbeat comment every 15 s, at both tiers (injected timers)', async (t) => {
  const database = await sqliteServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  const timers = createManualTimers()
  const posts = await startPostsApi(t, database, { sync: { timers } })
  const front = await startFront(new URL(posts.url), { syncTimers: timers })
  t.after(() => front.app.close())
  const direct = await follow(t, `${posts.url}/api/posts/changes`)
  const relayed = await follow(t, `${front.url}/api/changes`)
  await direct.waitFor((event) => event.lastEventId !== '')
  await relayed.waitFor((event) => event.lastEventId !== '')
  assert.doesNotMatch(direct.raw() + relayed.raw(), /heartbeat/)
  timers.advance(15_000)
  await pollUntil('a heartbeat at both tiers', () => direct.raw().includes(': heartbeat\n\n') && relayed.raw().includes(': heartbeat\n\n'))
})
