// STORE_CONCURRENCY at the post API, with a store whose reads finish when the test says and a
// clock the test moves: N uncached reads run, the next ones wait their turn, a full queue and an
// expired wait are 503 `overloaded` with Retry-After (a 503 with the same Retry-After at the
// front), and answers held already never wait.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { MAX_STORE_WAIT_MS, QUEUED_PER_TURN, STORE_BUSY_RETRY_AFTER_S } from '../../src/posts-api/store-gate.js'
import type { Post } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { get, type TestResponse } from '../helpers/http.js'
import { createManualTimers } from '../helpers/manual-timers.js'
import { assertProblem } from '../helpers/problem.js'
import { listen, silentLogger, startFront } from '../helpers/tiers.js'

const CONCURRENCY = 2

/** Resolves `until(check)` promises as soon as `check` holds, re-checked at each `changed()`. */
function createSignal (): { changed: () => void, until: (check: () => boolean) => Promise<void> } {
  const waiters: Array<{ check: () => boolean, resolve: () => void }> = []
  return {
    changed () {
      for (const waiter of [...waiters]) {
        if (waiter.check()) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      }
    },
    until: async (check) => { if (!check()) await new Promise<void>((resolve) => waiters.push({ check, resolve })) }
  }
}

/** A store that tracks changes (so answers are held) and holds each post read until released; `instant` slugs answer at once. */
function createHeldStore (instant: readonly string[], signal: { changed: () => void }) {
  const base = createCountingStore([])
  const held = new Map<string, () => void>()
  const reads: string[] = []
  const store = {
    ...base,
    tracksChanges: true,
    readChangeToken: async () => '1',
    async findPostBySlug (slug: string): Promise<Post | undefined> {
      reads.push(slug)
      signal.changed()
      if (!instant.includes(slug)) await new Promise<void>((resolve) => held.set(slug, resolve))
      return { slug, title: `Title of ${slug}` }
    }
  }
  return { store, reads, release: (slug: string) => held.get(slug)?.() }
}

function assertBusy (response: TestResponse): void {
  assertProblem(response, 'overloaded')
  assert.equal(response.headers['retry-after'], String(STORE_BUSY_RETRY_AFTER_S))
}

test(`STORE_CONCURRENCY=${CONCURRENCY}: the extra read waits its turn; a full queue and an expired wait are 503 with Retry-After; held answers never wait`, async (t) => {
  const signal = createSignal()
  const timers = createManualTimers()
  let queued = 0
  const { store, reads, release } = createHeldStore(['held'], signal)
  const app = buildPostsApp({
    store,
    logger: silentLogger,
    cacheControl: 'no-cache',
    server: testConfig().server,
    storeConcurrency: CONCURRENCY,
    // Each read that has to wait sets one timer: the test sees it queue without sleeping.
    timers: {
      setTimeout (callback, ms) {
        queued++
        signal.changed()
        return timers.setTimeout(callback, ms)
      }
    }
  })
  const posts = await listen(app)
  t.after(async () => { await app.close() })
  const front = await startFront(new URL(posts.url))
  t.after(async () => { await front.app.close() })

  // An answer built once is held for this change token.
  assert.equal((await get(posts.url, '/api/post/held')).status, 200)

  // N + 1 uncached reads: N reach the store, the extra one waits.
  const running = ['a', 'b'].map(async (slug) => await get(posts.url, `/api/post/${slug}`))
  await signal.until(() => reads.length === 1 + CONCURRENCY)
  const extra = get(posts.url, '/api/post/c')
  await signal.until(() => queued === 1)
  assert.deepEqual(reads.slice(1).sort(), ['a', 'b'])

  // Meanwhile, the held answer is served at once, at both tiers.
  assert.equal((await get(posts.url, '/api/post/held')).status, 200)
  assert.equal((await get(front.url, '/api/blog/held')).status, 200)

  // The queue holds QUEUED_PER_TURN × N; the next one is refused at once, at both tiers.
  const room = QUEUED_PER_TURN * CONCURRENCY - 1
  const waiting = Array.from({ length: room }, async (_, i) => await get(posts.url, `/api/post/w${i}`))
  await signal.until(() => queued === 1 + room)
  assertBusy(await get(posts.url, '/api/post/refused'))
  // Lists, pages and the keyed list take turns too.
  for (const path of ['/api/posts', '/api/posts?limit=1', '/api/posts/keyed']) assertBusy(await get(posts.url, path))
  // The front relays it as the upstream's 503, with its Retry-After.
  const relayed = await get(front.url, '/api/blog/refused')
  assertProblem(relayed, 'upstream-unavailable')
  assert.equal(relayed.headers['retry-after'], String(STORE_BUSY_RETRY_AFTER_S))
  assert.ok(!reads.includes('refused'), 'a refused read never reaches the store')

  // A read that finishes gives its turn to the first in line.
  release('a')
  assert.equal((await running[0])?.status, 200)
  await signal.until(() => reads.includes('c'))
  assert.equal(reads.length, 4)

  // The others' wait runs out: 503 with Retry-After, and they never reach the store.
  timers.advance(MAX_STORE_WAIT_MS)
  for (const response of await Promise.all(waiting)) assertBusy(response)
  assert.deepEqual(reads.slice(1).sort(), ['a', 'b', 'c'])

  release('b')
  release('c')
  assert.equal((await running[1])?.status, 200)
  assert.equal((await extra).status, 200)
  // Turns free again: the next read runs at once.
  const later = get(posts.url, '/api/post/later')
  await signal.until(() => reads.includes('later'))
  release('later')
  assert.equal((await later).status, 200)
})
