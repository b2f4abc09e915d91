// Page indexes within the budget, whatever clients ask: clients choose list shapes (`fields` ×
// `tag`), and every shape paged through often enough has its keyed list fetched and indexed. A
// flood of shapes must neither hold indexes beyond CACHE_MAX_MB (they are counted and evicted
// like copies) nor build more than one at a time (each reads its whole keyed list first).
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { Registry } from 'prom-client'
import { KEYED_LIST_PATH } from '../../../src/contract/keyed-list.js'
import { encodeCursor } from '../../../src/contract/cursor.js'
import { createUpstreamCache } from '../../../src/front/cache/upstream-cache.js'
import type { UpstreamClient } from '../../../src/front/upstream/client.js'
import { createFrontMetrics } from '../../../src/ops/front-metrics.js'
import { METRIC_PREFIX } from '../../../src/ops/metrics.js'

const UPSTREAM = 'http://127.0.0.1:1/'
const VERSION = 'v1.1'
const SHAPES = 24
const INDEX_AFTER = 3
const BUDGET = 256 * 1024

/** A keyed list of 100 posts of about 200 bytes: an index of it is counted for about 50 KB. */
function keyedList (path: string): Buffer {
  const lines = Array.from({ length: 100 }, (_, i) => {
    const slug = `p-${String(i).padStart(3, '0')}`
    return `${encodeCursor({ slug })} ${JSON.stringify({ slug, shape: path, content: 'x'.repeat(160) })}\n`
  })
  return Buffer.from(lines.join(''))
}

/**
 * An upstream whose keyed lists wait until the test releases them (so that builds overlap if the
 * cache lets them), and whose pages answer at once; both labelled with one posts version.
 */
function floodedUpstream () {
  const waiting: Array<() => void> = []
  const state = { keyedInFlight: 0, maxKeyedInFlight: 0, keyedCalls: 0, pageCalls: 0 }
  const client: UpstreamClient = {
    get: async (path) => {
      const headers = { 'posts-version': VERSION }
      if (path.startsWith(KEYED_LIST_PATH)) {
        state.keyedCalls++
        state.keyedInFlight++
        state.maxKeyedInFlight = Math.max(state.maxKeyedInFlight, state.keyedInFlight)
        await new Promise<void>((resolve) => waiting.push(resolve))
        state.keyedInFlight--
        return { status: 200, headers, body: Buffer.alloc(0), stream: Readable.from([keyedList(path)]), upstream: UPSTREAM }
      }
      state.pageCalls++
      return { status: 200, headers: { ...headers, etag: `"${state.pageCalls}"` }, body: Buffer.from(`[{"slug":"p-000","at":${JSON.stringify(path)}}]`), upstream: UPSTREAM }
    },
    version: async () => ({ status: 200, version: VERSION }),
    inRotation: () => 1
  }
  return { client, state, release: () => waiting.splice(0).forEach((resolve) => resolve()) }
}

const settle = async (): Promise<void> => { for (let i = 0; i < 20; i++) await new Promise(setImmediate) }

test('a flood of list shapes keeps page indexes within the budget, built one at a time', async () => {
  const upstream = floodedUpstream()
  const registry = new Registry()
  const observer = createFrontMetrics(registry, { inRotation: () => 1, held: () => cache.held(), heldOnDisk: () => cache.heldOnDisk() })
  const cache = createUpstreamCache({
    upstream: upstream.client, cacheMaxBytes: BUDGET, cacheDiskMaxBytes: 0, staleIfErrorS: 0, maxListBytes: 1 << 20, maxPostBytes: 1 << 20, listBufferLimit: 1 << 20, indexAfterCalls: INDEX_AFTER, observer
  })
  /** The `front_cache_bytes` gauge, as a scrape reads it. */
  const gauge = async (): Promise<number> => (await registry.getSingleMetric(`${METRIC_PREFIX}front_cache_bytes`)?.get())?.values[0]?.value ?? NaN
  let maxIndexing = 0
  let maxBytes = 0
  const observe = async (): Promise<void> => {
    maxIndexing = Math.max(maxIndexing, cache.indexing())
    maxBytes = Math.max(maxBytes, await gauge())
  }
  // Rounds of pages over every shape, concurrently within a round; the keyed lists asked for
  // are released between rounds.
  for (let round = 0; round < 12; round++) {
    await Promise.all(Array.from({ length: SHAPES }, async (_, shape) => {
      for (let page = 0; page < INDEX_AFTER; page++) {
        await cache.list({ limit: 1 + page, fields: ['content', 'slug'], tag: [`tag-${shape}`], after: { slug: 'p-000' } }, `r${round}-${shape}-${page}`)
        await observe()
      }
    }))
    upstream.release()
    await settle()
    await observe()
  }
  assert.equal(upstream.state.maxKeyedInFlight, 1, 'more than one keyed list was fetched at once')
  assert.equal(maxIndexing, 1)
  assert.ok(upstream.state.keyedCalls >= 12, `only ${upstream.state.keyedCalls} keyed lists were fetched`)
  assert.ok(maxBytes <= BUDGET, `held ${maxBytes} bytes for a budget of ${BUDGET}`)
  // Indexes are counted: those held take most of the budget, and each serves pages without a call.
  const bytes = await gauge()
  assert.ok(bytes > BUDGET / 4, `the indexes held are counted for ${bytes} bytes only`)
  const before = upstream.state.pageCalls
  let served = 0
  for (let shape = 0; shape < SHAPES; shape++) {
    await cache.list({ limit: 7, fields: ['content', 'slug'], tag: [`tag-${shape}`] }, `after-${shape}`)
    if (upstream.state.pageCalls === before + shape - served) served++
  }
  assert.ok(served >= 2 && served < SHAPES, `${served} of ${SHAPES} shapes answered from an index within the budget`)
})

test('a keyed list too large to hold is asked for again only after twice as many page calls each time', async () => {
  let keyedCalls = 0
  const client: UpstreamClient = {
    get: async (path) => {
      const headers = { 'posts-version': VERSION }
      if (path.startsWith(KEYED_LIST_PATH)) {
        keyedCalls++
        return { status: 200, headers, body: Buffer.alloc(0), stream: Readable.from([keyedList(path)]), upstream: UPSTREAM }
      }
      return { status: 200, headers: { ...headers, etag: '"page"' }, body: Buffer.from('[{"slug":"p-001"}]'), upstream: UPSTREAM }
    },
    version: async () => ({ status: 200, version: VERSION }),
    inRotation: () => 1
  }
  // An index of the 20 KB list would be counted for more than half of this budget: never held.
  const cache = createUpstreamCache({
    upstream: client, cacheMaxBytes: 32 * 1024, cacheDiskMaxBytes: 0, staleIfErrorS: 0, maxListBytes: 1 << 20, maxPostBytes: 1 << 20, listBufferLimit: 1 << 20, indexAfterCalls: INDEX_AFTER
  })
  const fetchedAt: number[] = []
  for (let call = 1; call <= 50; call++) {
    const before = keyedCalls
    await cache.list({ limit: 1, after: { slug: 'p-000' } }, `r${call}`)
    await settle()
    if (keyedCalls > before) fetchedAt.push(call)
  }
  // After 3 page calls, then 6 more, 12 more, 24 more.
  assert.deepEqual(fetchedAt, [3, 9, 21, 45])
  assert.equal(cache.held().copies, 1, 'the page alone is held')
})
