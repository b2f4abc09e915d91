// The tiers' helper leaves nothing behind when they cannot start: a front that fails to listen
// leaves no post API listening, and the store is closed, through startTiers and withTiers alike.
// The tiers it starts shed no load unless a test sets it (test/helpers/config.ts): a stall of the
// test process's event loop (the runner loading the next files) is not theirs.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { PostStore } from '../../src/store/store.js'
import { createSeededSqlite, openTestStore } from './databases.js'
import { startTiers, startTiersOn, withTiers, type Tiers } from './tiers.js'

/** A store over a seeded database that counts its closes; `failing` names a property whose reading throws. */
async function countingCloses (t: TestContext, failing?: keyof PostStore): Promise<{ store: PostStore, closes: () => number }> {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  const opened = await openTestStore(database.location)
  let closes = 0
  const store = new Proxy(opened, {
    get (target, name) {
      if (name === failing) throw new Error(`${name} cannot be read`)
      if (name === 'close') return async () => { closes++; await target.close() }
      const value: unknown = Reflect.get(target, name, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  return { store, closes: () => closes }
}

test('a front that cannot listen leaves no post API listening, and the store is closed', async (t) => {
  const { store, closes } = await countingCloses(t)
  let posts: FastifyInstance | undefined
  await assert.rejects(startTiers(store, {
    beforeListen (tier, app) {
      if (tier === 'posts') posts = app
      else app.addHook('onReady', async () => { throw new Error('the front cannot start') })
    }
  }), /the front cannot start/)
  assert.equal(posts?.server.listening, false, 'the post API was closed')
  assert.equal(closes(), 1)
})

test('withTiers closes the store when the tiers cannot start, and runs nothing', async (t) => {
  const { store, closes } = await countingCloses(t, 'tracksChanges')
  let ran = false
  await assert.rejects(withTiers(store, async () => { ran = true }), /tracksChanges cannot be read/)
  assert.equal(ran, false)
  assert.equal(closes(), 1)
})

/** Whether each tier registered load shedding (under-pressure decorates the app it sheds for). */
const shedding = (tiers: Tiers): boolean[] => [tiers.posts.app, tiers.front.app].map((app) => app.hasDecorator('isUnderPressure'))

test('the tiers started here shed no load unless a test sets it', async (t) => {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  const plain = await startTiersOn(database)
  t.after(() => plain.close())
  assert.deepEqual(shedding(plain), [false, false])
  const set = await startTiers(await openTestStore(database.location), { settings: { LOAD_SHED_DELAY_MS: '1000' } })
  t.after(() => set.close())
  assert.deepEqual(shedding(set), [true, true])
})
