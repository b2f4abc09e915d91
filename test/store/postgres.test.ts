import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { openTestStore, postgresServer } from '../helpers/databases.js'
import { testConfig } from '../helpers/config.js'
import { freePort } from '../helpers/fake-upstream.js'
import { startRoundTripCounter } from '../helpers/round-trip-counter.js'
import { describePostgresLoss, installChangeTracking, POSTGRES_FAULTS, POSTGRES_FIXTURE } from './postgres-cases.js'
import { describeStoreContract } from './store-contract.js'
import { describeStoreErrors, silentServer } from './store-errors.js'

describeStoreContract('PostgreSQL', postgresServer, POSTGRES_FIXTURE)

describePostgresLoss('PostgreSQL', postgresServer)

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

describe('PostgreSQL round trips', { skip: postgresServer.skip }, () => {
  test('the change-token read, before nearly every answer, is one round trip with its time-out; a slug read at most three', async (t) => {
    const db = await postgresServer.create()
    t.after(async () => { await db.drop() })
    await installChangeTracking(db)
    await db.exec("INSERT INTO posts (slug, title) VALUES ('first-post', 'First')")
    const target = new URL((db.location as { url: string }).url)
    const counter = await startRoundTripCounter({ host: target.hostname, port: Number(target.port) })
    t.after(async () => { await counter.close() })
    target.port = String(counter.port)
    const store = await openTestStore({ dialect: 'postgres', url: target.href }, { config: testConfig({ DB_POOL_SIZE: '1' }) })
    t.after(async () => { await store.close() })
    await store.checkSchema()
    await store.readChangeToken() // the connection is made

    const perCall = async (read: () => Promise<unknown>): Promise<number> => {
      counter.reset()
      for (let i = 0; i < 20; i++) await read()
      return counter.roundTrips() / 20
    }
    assert.equal(await perCall(async () => await store.readChangeToken()), 1)
    // BEGIN with SET LOCAL, the parameterised SELECT, COMMIT (only when the token changed).
    const slugRead = await perCall(async () => assert.equal((await store.findPostBySlug('first-post'))?.title, 'First'))
    assert.ok(slugRead <= 3, `${slugRead} round trips per slug read`)
  })
})
