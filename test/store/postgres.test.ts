import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { openTestStore, postgresServer } from '../helpers/databases.js'
import { testConfig } from '../helpers/config.js'
import { freePort } from '../helpers/fake-upstream.js'
import { startRoundTripCounter } from '../helpers/round-trip-counter.js'
import { startCuttingRelay } from '../helpers/cutting-relay.js'
import type { SettingName } from '../../src/config.js'
import { StoreUnavailableError, type PostStore } from '../../src/store/store.js'
import { describePostgresLoss, migrateDefaultTable, POSTGRES_FAULTS, POSTGRES_FIXTURE } from './postgres-cases.js'
import { describePostgresWritePaths } from './postgres-write-paths.js'
import { describeStoreContract } from './store-contract.js'
import { describeStoreErrors, silentServer } from './store-errors.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

describeStoreContract('PostgreSQL', postgresServer, POSTGRES_FIXTURE)

describePostgresLoss('PostgreSQL', postgresServer)

describePostgresWritePaths('PostgreSQL', postgresServer)

// A direct connection may prepare the change-token query and keep the time-out in the session.
const PREPARED = { DB_PREPARED_STATEMENTS: 'on' } as const

describeStoreContract('PostgreSQL with DB_PREPARED_STATEMENTS=on', postgresServer, POSTGRES_FIXTURE, PREPARED)

describeStoreErrors('PostgreSQL with DB_PREPARED_STATEMENTS=on', postgresServer, POSTGRES_FAULTS, PREPARED)

describeStoreErrors('PostgreSQL', postgresServer, {
  outages: [
    ...POSTGRES_FAULTS.outages,
    { name: 'connection refused', location: async () => ({ dialect: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/blog` }), cause: async () => {} },
    {
      name: 'no connection within DB_CONNECT_TIMEOUT_MS',
      settings: { DB_CONNECT_TIMEOUT_MS: '200' },
      location: async (t) => ({ dialect: 'postgres', url: `postgres://postgres@127.0.0.1:${await silentServer(t)}/blog` }),
      cause: async () => {}
    }
  ],
  defects: POSTGRES_FAULTS.defects
})

/**
 * A fresh database holding one post, and a store of one pooled connection that reaches it through
 * the relay `startRelay` puts in front of the server. The database and the relay go after the
 * test; the store is the test's to close.
 */
async function onePostThroughRelay<Relay extends { port: number, close: () => Promise<void> }> (
  t: TestContext,
  startRelay: (target: { host: string, port: number }) => Promise<Relay>,
  settings: Partial<Record<SettingName, string>> = {}
): Promise<{ relay: Relay, store: PostStore }> {
  const db = await postgresServer.create()
  t.after(async () => { await db.drop() })
  await migrateDefaultTable(db)
  await db.exec("INSERT INTO posts (slug, title) VALUES ('first-post', 'First')")
  const target = new URL((db.location as { url: string }).url)
  const relay = await startRelay({ host: target.hostname, port: Number(target.port) })
  t.after(async () => { await relay.close() })
  target.port = String(relay.port)
  const store = await openTestStore({ dialect: 'postgres', url: target.href }, { config: testConfig({ ...settings, DB_POOL_SIZE: '1' }) })
  return { relay, store }
}

describeOrSkip('PostgreSQL round trips', { skip: postgresServer.skip }, () => {
  const cases = [
    // The change-token read, before nearly every answer, is one string with its SET LOCAL; a
    // post (read only when the token changed) is BEGIN with SET LOCAL, the SELECT, COMMIT.
    { settings: {}, changeToken: 1, post: 3, prepared: false },
    // Prepared once per connection, with the time-out in the session: one round trip each, and
    // the change-token query's text (some 200 bytes) is no longer sent.
    { settings: PREPARED, changeToken: 1, post: 1, prepared: true }
  ]
  for (const { settings, changeToken, post, prepared } of cases) {
    test(`${JSON.stringify(settings)}: a change-token read is ${changeToken} round trip, a post read ${post}`, async (t) => {
      const { relay: counter, store } = await onePostThroughRelay(t, startRoundTripCounter, settings)
      t.after(async () => { await store.close() })
      await store.checkSchema()
      await store.readChangeToken() // connected, and prepared where it is

      const perCall = async (read: () => Promise<unknown>): Promise<number> => {
        counter.reset()
        for (let i = 0; i < 20; i++) await read()
        return counter.roundTrips() / 20
      }
      assert.equal(await perCall(async () => assert.match(String(await store.readChangeToken()), /^s\d+(?:-[\d~]+)?$/)), changeToken)
      const bytes = counter.clientBytes() / 20
      assert.ok(prepared ? bytes < 100 : bytes > 200, `${bytes} bytes sent per change-token read`)
      assert.equal(await perCall(async () => assert.equal((await store.findPostBySlug('first-post'))?.title, 'First')), post)
    })
  }
})

describeOrSkip('PostgreSQL: a connection lost as a streamed list completes', { skip: postgresServer.skip }, () => {
  // The server's CommandComplete came, its ReadyForQuery never will: the moment a backend
  // terminated under load met (the list's read had waited for ever, holding its connection).
  test('the list fails as the store being unavailable, and the pool, the next reads and closing the store go on', { timeout: 30_000 }, async (t) => {
    // One connection: a read that kept it would leave none for the reads after it.
    const { relay, store } = await onePostThroughRelay(t, startCuttingRelay)
    await store.checkSchema()
    const slugsListed = async (): Promise<string[]> => {
      const slugs: string[] = []
      for await (const posts of store.streamPosts()) slugs.push(...posts.map((post) => post.slug))
      return slugs
    }

    relay.arm()
    await assert.rejects(slugsListed(), StoreUnavailableError)
    assert.equal(relay.cuts(), 1, 'the connection was cut after the list\'s rows')
    assert.equal((await store.findPostBySlug('first-post'))?.title, 'First')
    assert.deepEqual(await slugsListed(), ['first-post'])
    await store.close()
  })
})
