// The post API's version lane answers as the framework does: two post APIs over the same store,
// one with the lane (the default) and one without, are asked the same requests over real HTTP
// and must give the same status, headers and bytes, the same access lines and the same request
// metrics, while the store answers and while it fails. A failed read is handed to the route,
// which answers it without asking the store again, and a read that succeeds after failures
// starts the Retry-After over, as the route's own reads do.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Pool } from 'undici'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { StoreUnavailableError, type PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore, type TestDatabase } from '../helpers/databases.js'
import { accessLine, ask, requestCounts, type Answer, type ComparedServer } from '../helpers/compared-answers.js'
import { logSink } from '../helpers/log-sink.js'
import { listen, type RunningApp } from '../helpers/tiers.js'

interface PostsApi extends ComparedServer {
  app: RunningApp
}

let database: TestDatabase
let opened: PostStore
/** Whether the store's change token fails, and how many times it was read. */
const token = { failing: false, reads: 0 }
let lane: PostsApi
let framework: PostsApi

async function startPostsApi (store: PostStore, fastLane: boolean): Promise<PostsApi> {
  const sink = logSink('info')
  const metrics = createProcessMetrics()
  const app = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: sink.logger, metrics, fastLane })))
  return { app, pool: new Pool(app.url, { connections: 1 }), sink, metrics }
}

/** Asks both post APIs, and checks that they answer alike and that each read the token `reads` times. */
async function askBoth (method: string, path: string, reqId: string, reads: number): Promise<Answer> {
  const answers: Answer[] = []
  for (const api of [lane, framework]) {
    const before = token.reads
    answers.push(await ask(api, method, path, { 'x-request-id': reqId }))
    assert.equal(token.reads - before, reads, `${method} ${path}: the token read ${reads} time(s)`)
  }
  const [fast, slow] = answers as [Answer, Answer]
  assert.deepEqual({ status: fast.status, headers: fast.headers }, { status: slow.status, headers: slow.headers }, `${method} ${path}`)
  assert.ok(fast.body.equals(slow.body), `${method} ${path}: the same bytes`)
  assert.deepEqual(await accessLine(lane, reqId), await accessLine(framework, reqId))
  return fast
}

before(async () => {
  database = await createSeededSqlite()
  opened = await openTestStore(database.location)
  await opened.checkSchema()
  const store = new Proxy(opened, {
    get (target, name) {
      if (name === 'readChangeToken') {
        return async () => {
          token.reads++
          if (token.failing) throw new StoreUnavailableError('the store went away')
          return await target.readChangeToken()
        }
      }
      const value: unknown = Reflect.get(target, name, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  lane = await startPostsApi(store, true)
  framework = await startPostsApi(store, false)
})
after(async () => {
  for (const api of [lane, framework]) {
    await api.pool.close()
    await api.app.app.close()
  }
  await opened.close()
  await database.drop()
})

test('the version, with and without the lane: the same answers, lines and metrics, the store read once each', async () => {
  const answer = await askBoth('GET', '/api/posts/version', 'version-1', 1)
  assert.equal(answer.status, 200)
  const { version } = JSON.parse(answer.body.toString()) as { version: string }
  assert.equal(answer.headers['posts-version'], version)
  assert.equal(answer.headers['cache-control'], 'no-store')
  // What the lane leaves to the framework: a query, a HEAD.
  await askBoth('GET', '/api/posts/version?x=1', 'version-2', 1)
  await askBoth('HEAD', '/api/posts/version', 'version-3', 1)
  assert.deepEqual(await requestCounts(lane), await requestCounts(framework))
})

test('a failing store: the same 503 with its growing Retry-After, one read each; a read that succeeds starts it over', async () => {
  token.failing = true
  const retryAfters: unknown[] = []
  for (const n of [1, 2, 3]) {
    const failed = await askBoth('GET', '/api/posts/version', `failing-${n}`, 1)
    assert.equal(failed.status, 503)
    assert.equal(failed.headers['content-type'], 'application/problem+json')
    retryAfters.push(failed.headers['retry-after'])
  }
  assert.deepEqual(retryAfters, ['1', '2', '4'])
  token.failing = false
  assert.equal((await askBoth('GET', '/api/posts/version', 'recovered', 1)).status, 200)
  token.failing = true
  assert.equal((await askBoth('GET', '/api/posts/version', 'failing-again', 1)).headers['retry-after'], '1')
  token.failing = false
  assert.deepEqual(await requestCounts(lane), await requestCounts(framework))
})
