// The front's metrics, read back from its own GET /metrics as Prometheus
// would: after a known sequence of requests the counters say exactly that, each upstream outcome
// is told apart, coalesced requests and held copies are counted, and probes and scrapes are not.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { test } from 'node:test'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { etagOf } from '../../src/http/representation.js'
import { freePort, json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { parseMetrics, samplesOf, valueOf, type Sample } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { startFront, type FrontTestOptions, type RunningApp } from '../helpers/tiers.js'

const REQUESTS = 'blog_read_api_http_request_duration_seconds_count'
const CALLS = 'blog_read_api_upstream_call_duration_seconds_count'
const CACHE = 'blog_read_api_front_cache_requests_total'
const OUTCOMES = ['ok', 'not-modified', 'not-found', 'refused', 'reset', 'timeout', 'bad-response', 'unavailable']

/** Answers as the post API does (ETag, 304), and misbehaves on some slugs. */
function upstreamAnswer (path: string, ifNoneMatch: string | undefined, res: ServerResponse): void {
  const slug = decodeURIComponent(path.slice('/api/post/'.length))
  switch (slug) {
    case 'missing': return json(res, 404, { title: 'Not found' })
    case 'broken':
      res.socket?.destroy()
      return
    case 'failing': return json(res, 500, { title: 'Internal' })
    case 'down': return json(res, 503, { title: 'Store unavailable' }, { 'retry-after': '1' })
    case 'wrong-shape': return json(res, 200, { slug: 'another-post' })
    case 'hanging': return
  }
  const body = JSON.stringify({ slug, title: slug })
  const etag = etagOf(Buffer.from(body))
  if (ifNoneMatch === etag) {
    res.writeHead(304, { etag })
    res.end()
  } else {
    json(res, 200, body, { etag })
  }
}

async function startUpstream (): Promise<FakeUpstream> {
  return await startFakeUpstream((req, res) => upstreamAnswer(req.url ?? '', req.headers['if-none-match'], res))
}

async function scrape (front: RunningApp): Promise<Sample[]> {
  const response = await get(front.url, '/metrics')
  assert.equal(response.status, 200)
  assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  assert.equal(response.headers['cache-control'], 'no-store')
  return parseMetrics(response.text)
}

async function withFront (upstreamUrl: URL, options: FrontTestOptions, run: (front: RunningApp) => Promise<void>): Promise<void> {
  const front = await startFront(upstreamUrl, { metrics: createProcessMetrics(), ...options })
  try {
    await run(front)
  } finally {
    await front.app.close()
  }
}

/** The number of upstream calls by outcome: `expected`'s, and 0 for every other outcome. */
function assertCalls (samples: readonly Sample[], expected: Record<string, number>): void {
  for (const outcome of OUTCOMES) assert.equal(valueOf(samples, CALLS, { outcome }), expected[outcome] ?? 0, `calls with outcome ${outcome}`)
}

test('after 200, 304, 404, 400 and an upstream failure, the counters read exactly that', async () => {
  const upstream = await startUpstream()
  try {
    await withFront(upstream.url, {}, async (front) => {
      const first = await get(front.url, '/api/blog/hello-world')
      assert.equal(first.status, 200)
      assert.equal((await get(front.url, '/api/blog/hello-world', { 'if-none-match': String(first.headers.etag) })).status, 304)
      assert.equal((await get(front.url, '/api/blog/missing')).status, 404)
      assert.equal((await get(front.url, '/api/blog/Not_A_Slug')).status, 400)
      assert.equal((await get(front.url, '/api/blog/broken')).status, 502)
      // Probes and earlier scrapes are not requests of the API.
      assert.equal((await get(front.url, '/healthz')).status, 200)
      assert.equal((await get(front.url, '/readyz')).status, 200)
      await scrape(front)

      const samples = await scrape(front)
      const item = { tier: 'front', route: '/api/blog/:slug', method: 'GET' }
      assert.deepEqual(samplesOf(samples, REQUESTS).map((s) => [s.labels.route, s.labels.status, s.value]).sort(), [
        ['/api/blog/:slug', '200', 1], ['/api/blog/:slug', '304', 1], ['/api/blog/:slug', '400', 1], ['/api/blog/:slug', '404', 1], ['/api/blog/:slug', '502', 1]
      ])
      for (const status of ['200', '304', '404', '400', '502']) assert.equal(valueOf(samples, REQUESTS, { ...item, status }), 1)
      // The 400 made no call; the failure was retried once on a fresh connection, within its one call.
      assertCalls(samples, { ok: 1, 'not-modified': 1, 'not-found': 1, reset: 1 })
      assert.equal(upstream.requests.length, 5)
      assert.equal(valueOf(samples, CACHE, { result: 'miss' }), 1)
      assert.equal(valueOf(samples, CACHE, { result: 'hit' }), 1)
      assert.equal(valueOf(samples, CACHE, { result: 'stale' }), 0)
      assert.equal(valueOf(samples, 'blog_read_api_front_cache_copies'), 1)
      assert.ok(valueOf(samples, 'blog_read_api_front_cache_bytes') > 0)
      assert.equal(valueOf(samples, 'blog_read_api_upstreams_in_rotation'), 1)
      assert.equal(valueOf(samples, 'blog_read_api_upstream_coalesced_requests_total'), 0)
      // The latency histogram: every request in the +Inf bucket, a sum of seconds.
      assert.equal(valueOf(samples, 'blog_read_api_http_request_duration_seconds_bucket', { ...item, status: '200', le: '+Inf' }), 1)
      assert.ok(valueOf(samples, 'blog_read_api_http_request_duration_seconds_sum', { ...item, status: '200' }) > 0)
      // And the process defaults.
      assert.ok(valueOf(samples, 'process_cpu_seconds_total') > 0)
      assert.ok(samplesOf(samples, 'nodejs_heap_size_used_bytes').length === 1)
    })
  } finally {
    await upstream.close()
  }
})

test('each upstream outcome is told apart', { timeout: 20_000 }, async () => {
  const upstream = await startUpstream()
  const cases: Array<{ outcome: string, path: string, status: number, over?: URL, options?: FrontTestOptions }> = [
    { outcome: 'bad-response', path: '/api/blog/failing', status: 502 },
    { outcome: 'bad-response', path: '/api/blog/wrong-shape', status: 502 },
    { outcome: 'unavailable', path: '/api/blog/down', status: 503 },
    { outcome: 'timeout', path: '/api/blog/hanging', status: 504, options: { timeoutMs: 200 } },
    { outcome: 'refused', path: '/api/blog/hello-world', status: 502, over: new URL(`http://127.0.0.1:${await freePort()}`) }
  ]
  try {
    for (const { outcome, path, status, over, options = {} } of cases) {
      await withFront(over ?? upstream.url, options, async (front) => {
        assert.equal((await get(front.url, path)).status, status, path)
        assertCalls(await scrape(front), { [outcome]: 1 })
      })
    }
  } finally {
    await upstream.close()
  }
})

test('no upstream in rotation: calls are still made, counted by what the upstream did', async () => {
  const over = new URL(`http://127.0.0.1:${await freePort()}`)
  await withFront(over, { ejectFailures: 1, probeIntervalMs: 60_000 }, async (front) => {
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 502)
    assert.equal(valueOf(await scrape(front), 'blog_read_api_upstreams_in_rotation'), 0)
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 502)
    assertCalls(await scrape(front), { refused: 2 })
  })
})

test('requests that joined a call another had started are counted as coalesced', async () => {
  // The upstream holds the first call until the test lets it go: the other requests arrive
  // meanwhile, and share the next call.
  const held: Array<() => void> = []
  const upstream = await startFakeUpstream((req, res) => { held.push(() => upstreamAnswer(req.url ?? '', undefined, res)) })
  try {
    await withFront(upstream.url, {}, async (front) => {
      const answers = Promise.all(Array.from({ length: 6 }, async () => await get(front.url, '/api/blog/hello-world')))
      await pollUntil('five requests waiting for the next call', async () =>
        valueOf(await scrape(front), 'blog_read_api_upstream_coalesced_requests_total') === 5)
      held.shift()?.()
      await pollUntil('the next call', () => held.length === 1)
      held.shift()?.()
      assert.deepEqual((await answers).map((a) => a.status), [200, 200, 200, 200, 200, 200])
      const samples = await scrape(front)
      assert.equal(valueOf(samples, 'blog_read_api_upstream_coalesced_requests_total'), 5)
      assertCalls(samples, { ok: 2 })
      // Each request got a body the upstream sent (none was held before).
      assert.equal(valueOf(samples, CACHE, { result: 'miss' }), 6)
    })
  } finally {
    await upstream.close()
  }
})

test('a held copy served in place of a failure is counted as stale', async () => {
  const upstream = await startUpstream()
  try {
    await withFront(upstream.url, { staleIfErrorS: 60 }, async (front) => {
      assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)
      upstream.behave((_req, res) => json(res, 503, { title: 'down' }))
      const stale = await get(front.url, '/api/blog/hello-world')
      assert.equal(stale.status, 200)
      assert.match(String(stale.headers['cache-status']), /fwd=stale/)
      const samples = await scrape(front)
      assert.equal(valueOf(samples, CACHE, { result: 'stale' }), 1)
      assert.equal(valueOf(samples, CACHE, { result: 'miss' }), 1)
      assertCalls(samples, { ok: 1, unavailable: 1 })
    })
  } finally {
    await upstream.close()
  }
})
