// The whole list of the sync route (`GET /api/posts/changes` without `since`) over real HTTP: a
// failure to observe the state it names afterwards is logged, and the answer stays whole.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { StoreUnavailableError, type PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore } from '../helpers/databases.js'
import { logSink } from '../helpers/log-sink.js'
import { listen } from '../helpers/tiers.js'

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
