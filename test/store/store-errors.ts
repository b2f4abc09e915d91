// Store failures, per store, with the real driver made to fail: an outage (connection refused or
// lost, no connection in time, a statement time-out, the table or a column gone) is a 503
// `store-unavailable` with Retry-After, logged at warn; anything else (an unexpected driver
// error, a defect of ours such as a TypeError) is a 500 `internal`, logged at error with its stack.
import assert from 'node:assert/strict'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { test, type TestContext } from 'node:test'
import type { SettingName, StoreLocation } from '../../src/config.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import type { PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import type { TestResponse } from '../helpers/http.js'
import { logSink, type LogLine } from '../helpers/log-sink.js'
import { assertProblem } from '../helpers/problem.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

export const POST_PATH = '/api/post/first-post'
export const LIST_PATH = '/api/posts'

type Settings = Partial<Record<SettingName, string>>

export interface StoreFault {
  name: string
  /** Settings the serving store is opened with (e.g. a short statement time-out). */
  settings?: Settings
  /** Where the serving store points instead of the test database (a server that is not there). */
  location?: (t: TestContext) => Promise<StoreLocation>
  /** Runs before the serving store opens. */
  prepare?: (db: TestDatabase) => Promise<void>
  /** Which reads to ask for; both by default. */
  paths?: string[]
  /** Brings the fault about once the store serves `posts`, which holds `first-post`. */
  cause: (db: TestDatabase, t: TestContext) => Promise<void>
  /** What the logged error's stack starts with (500s). */
  logged?: RegExp
}

export interface StoreFaults {
  /** Faults that must answer 503. */
  outages: StoreFault[]
  /** Faults that must answer 500: real driver errors that are no outage, and injected defects. */
  defects: StoreFault[]
}

const WARN = 40
const ERROR = 50

/**
 * A plain table, valid SQL on every store (no change tracking: PostgreSQL's would answer for a
 * missing table before the driver is asked), holding `first-post`; then the serving store.
 */
async function serveFirstPost (db: TestDatabase, fault: StoreFault, settings: Settings, t: TestContext): Promise<PostStore> {
  await db.exec('CREATE TABLE posts (id INTEGER PRIMARY KEY, slug VARCHAR(200) NOT NULL UNIQUE, title VARCHAR(200), published_at VARCHAR(30))')
  await db.exec("INSERT INTO posts (id, slug, title, published_at) VALUES (1, 'first-post', 'First', '2024-01-01T00:00:00.000Z')")
  await fault.prepare?.(db)
  const location = fault.location === undefined ? db.location : await fault.location(t)
  const store = await openTestStore(location, { config: testConfig({ ...settings, ...fault.settings }) })
  if (fault.location === undefined) await store.checkSchema()
  return store
}

/** A TCP server that accepts connections and never says a word: the database never answers. */
export async function silentServer (t: TestContext): Promise<number> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return (server.address() as AddressInfo).port
}

/** Runs `fault` and asks for each of its paths, through a post API logging to a sink. */
async function answersUnder (server: TestServer, fault: StoreFault, settings: Settings, t: TestContext): Promise<{ answers: Array<[string, TestResponse]>, entries: LogLine[] }> {
  const db = await server.create()
  const { logger, lines: entries } = logSink('warn')
  const config = testConfig()
  let store: PostStore | undefined
  try {
    store = await serveFirstPost(db, fault, settings, t)
    const app = buildPostsApp({
      store,
      logger,
      cacheControl: config.cacheControl,
      server: { ...config.server, loadShedDelayMs: 0 }
    })
    try {
      await fault.cause(db, t)
      const answers: Array<[string, TestResponse]> = []
      for (const path of fault.paths ?? [POST_PATH, LIST_PATH]) {
        const response = await app.inject({ method: 'GET', url: path })
        answers.push([path, { status: response.statusCode, headers: response.headers as TestResponse['headers'], text: response.body, json: () => JSON.parse(response.body) }])
      }
      return { answers, entries }
    } finally {
      await app.close()
    }
  } finally {
    t.mock.restoreAll()
    await store?.close()
    await db.drop()
  }
}

/** `settings`: what every serving store is opened with, under each fault's own. */
export function describeStoreErrors (name: string, server: TestServer, faults: StoreFaults, settings: Settings = {}): void {
  describeOrSkip(`${name} store errors`, { skip: server.skip }, () => {
    for (const fault of faults.outages) {
      test(`${fault.name}: 503 store-unavailable with Retry-After, logged at warn`, { timeout: 20_000 }, async (t) => {
        const { answers, entries } = await answersUnder(server, fault, settings, t)
        for (const [path, response] of answers) {
          assertProblem(response, 'store-unavailable')
          assert.match(String(response.headers['retry-after']), /^[1-5]$/, path)
        }
        assert.deepEqual(entries.filter((e) => e.level >= ERROR), [], 'nothing logged at error')
        const warnings = entries.filter((e) => e.level === WARN && e.err?.type === 'ProblemError')
        assert.equal(warnings.length, answers.length, 'one warning per answer')
      })
    }
    for (const fault of faults.defects) {
      test(`${fault.name}: 500 internal, logged at error with its stack`, { timeout: 20_000 }, async (t) => {
        const { answers, entries } = await answersUnder(server, fault, settings, t)
        for (const [, response] of answers) assertProblem(response, 'internal')
        const errors = entries.filter((e) => e.level === ERROR)
        assert.equal(errors.length, answers.length, 'one error entry per answer')
        for (const entry of errors) {
          assert.match(entry.err?.stack ?? '', fault.logged ?? /^/, 'the error itself, not a store failure')
          assert.match(entry.err?.stack ?? '', /\n\s+at /, 'logged with its stack')
        }
        assert.deepEqual(entries.filter((e) => e.level === WARN), [], 'not reported as a store failure')
      })
    }
  })
}

/** A defect of ours, the same on every store: the driver throws a TypeError on our reads. */
export function typeErrorFrom (prototype: object, method: string, reads: (args: unknown[]) => boolean = () => true): StoreFault {
  const methods = prototype as Record<string, (...args: unknown[]) => unknown>
  return {
    name: `a TypeError from the driver's ${method}()`,
    logged: /^TypeError: injected/,
    cause: async (_db, t) => {
      const original = methods[method]
      assert.equal(typeof original, 'function', `the driver has ${method}()`)
      t.mock.method(methods, method, function (this: unknown, ...args: unknown[]) {
        if (reads(args)) throw new TypeError('injected: a defect of ours')
        return original?.apply(this, args)
      })
    }
  }
}
