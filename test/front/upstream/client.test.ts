// The upstream client's mapping over undici's MockAgent: what it sends, how it bounds and hands
// over bodies, how it classifies failures, where it retries, and how it spreads calls over several
// upstreams, takes failing ones out of rotation and back after a probe.
// Faults that need real sockets (refused, reset, stalls, the keep-alive race) are tested against
// loopback fake upstreams in failure-mapping, resilience and keep-alive-race.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { text } from 'node:stream/consumers'
import { openUpstreamClient } from '../../../src/front/upstream/client.js'
import { testConfig } from '../../helpers/config.js'
import { startFakeUpstream } from '../../helpers/fake-upstream.js'
import { call, clientOver, coded, mockAgent, ORIGIN, rejectsWith } from '../../helpers/mock-upstream.js'

test('sends a GET under the base path with Accept, X-Request-Id and If-None-Match, and reads the body whole', async (t) => {
  const agent = mockAgent()
  agent.get(ORIGIN).intercept({
    path: '/backend/api/post/a',
    method: 'GET',
    headers: { accept: 'application/json', 'x-request-id': 'req-1', 'if-none-match': '"v1"' }
  }).reply(200, '{"slug":"a"}', { headers: { etag: '"v2"' } })
  const { client } = clientOver(t, agent, { bases: [`${ORIGIN}/backend/`] })
  const response = await client.get('/api/post/a', { ...call, ifNoneMatch: '"v1"' })
  assert.equal(response.status, 200)
  assert.equal(response.headers.etag, '"v2"')
  assert.equal(response.body.toString(), '{"slug":"a"}')
  assert.equal(response.stream, undefined)
  agent.assertNoPendingInterceptors()
})

test('any status is handed back as it is (the cache maps them)', async (t) => {
  const agent = mockAgent()
  agent.get(ORIGIN).intercept({ path: '/api/posts' }).reply(503, 'down', { headers: { 'retry-after': '3' } })
  const response = await clientOver(t, agent).client.get('/api/posts', call)
  assert.equal(response.status, 503)
  assert.equal(response.headers['retry-after'], '3')
})

test('a body declared or counted past maxBytes is a 502 upstream-bad-response', async (t) => {
  const agent = mockAgent()
  const big = 'x'.repeat(1001)
  agent.get(ORIGIN).intercept({ path: '/declared' }).reply(200, big, { headers: { 'content-length': String(big.length) } })
  agent.get(ORIGIN).intercept({ path: '/counted' }).reply(200, big)
  const { client } = clientOver(t, agent)
  await rejectsWith(client.get('/declared', call), 'upstream-bad-response')
  await rejectsWith(client.get('/counted', call), 'upstream-bad-response')
  const exact = mockAgent()
  exact.get(ORIGIN).intercept({ path: '/exact' }).reply(200, 'x'.repeat(1000))
  assert.equal((await clientOver(t, exact).client.get('/exact', call)).body.length, 1000)
})

test('a body declared above streamAbove is handed over as a stream of the whole body', async (t) => {
  const agent = mockAgent()
  const list = `[${'"x",'.repeat(100)}"y"]`
  agent.get(ORIGIN).intercept({ path: '/api/posts' }).reply(200, list, { headers: { 'content-length': String(list.length) } })
  const response = await clientOver(t, agent).client.get('/api/posts', { ...call, streamAbove: 100 })
  assert.equal(response.body.length, 0)
  assert.ok(response.stream !== undefined, 'not streamed')
  assert.equal(await text(response.stream), list)
})

test('a body of unknown length is streamed only past streamAbove; a declared one below it is read whole', async (t) => {
  const agent = mockAgent()
  const small = '[1]'
  const large = `[${'1,'.repeat(100)}1]`
  agent.get(ORIGIN).intercept({ path: '/small' }).reply(200, small)
  agent.get(ORIGIN).intercept({ path: '/large' }).reply(200, large)
  agent.get(ORIGIN).intercept({ path: '/declared' }).reply(200, large, { headers: { 'content-length': String(large.length) } })
  const { client } = clientOver(t, agent)
  const whole = await client.get('/small', { ...call, streamAbove: 100 })
  assert.equal(whole.stream, undefined)
  assert.equal(whole.body.toString(), small)
  const streamed = await client.get('/large', { ...call, streamAbove: 100 })
  assert.ok(streamed.stream !== undefined, 'not streamed')
  assert.equal(await text(streamed.stream), large)
  const declared = await client.get('/declared', { ...call, streamAbove: large.length })
  assert.equal(declared.stream, undefined)
  assert.equal(declared.body.toString(), large)
})

test('undici time-out errors are 504 upstream-timeout; other transport errors 502 upstream-unreachable', async (t) => {
  for (const [code, kind] of [
    ['UND_ERR_CONNECT_TIMEOUT', 'upstream-timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'upstream-timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'upstream-timeout'],
    ['ECONNREFUSED', 'upstream-unreachable'],
    ['ENOTFOUND', 'upstream-unreachable']
  ] as const) {
    const agent = mockAgent()
    agent.get(ORIGIN).intercept({ path: '/api/posts' }).replyWithError(coded(code))
    const { client, freshUsed } = clientOver(t, agent)
    const err = await rejectsWith(client.get('/api/posts', call), kind)
    assert.equal((err.cause as { code?: string }).code, code)
    assert.equal(freshUsed(), 0, `${code} is not retried`)
  }
})

test('the whole-call budget cuts an answer that comes too late: 504', async (t) => {
  const agent = mockAgent()
  agent.get(ORIGIN).intercept({ path: '/api/posts' }).reply(200, '[]').delay(5000)
  const started = performance.now()
  await rejectsWith(clientOver(t, agent, { timeoutMs: 50 }).client.get('/api/posts', call), 'upstream-timeout')
  assert.ok(performance.now() - started < 4000, 'the delayed answer was waited for')
})

test('a connection broken before any answer is retried once on a fresh connection, closed after use', async (t) => {
  for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']) {
    const agent = mockAgent()
    agent.get(ORIGIN).intercept({ path: '/api/post/a' }).replyWithError(coded(code))
    const fresh = mockAgent()
    fresh.get(ORIGIN).intercept({ path: '/api/post/a', headers: { 'x-request-id': 'req-1' } }).reply(200, '{"slug":"a"}')
    let closed = false
    const close = fresh.close.bind(fresh)
    fresh.close = (async () => { closed = true; await close() }) as typeof fresh.close
    const { client, freshUsed } = clientOver(t, agent, { fresh: [fresh] })
    const response = await client.get('/api/post/a', call)
    assert.equal(response.body.toString(), '{"slug":"a"}', code)
    assert.equal(freshUsed(), 1)
    await new Promise(setImmediate)
    assert.ok(closed, 'the fresh connection was not closed')
  }
})

test('a retry that breaks too is the 502: one retry only', async (t) => {
  const agent = mockAgent()
  agent.get(ORIGIN).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNRESET'))
  const fresh = mockAgent()
  fresh.get(ORIGIN).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNRESET'))
  const { client, freshUsed } = clientOver(t, agent, { fresh: [fresh] })
  await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  assert.equal(freshUsed(), 1)
})

test('the whole-call budget covers the retry too: a retry that does not answer in time is the 504', async (t) => {
  const agent = mockAgent()
  agent.get(ORIGIN).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNRESET'))
  const fresh = mockAgent()
  fresh.get(ORIGIN).intercept({ path: '/api/posts' }).reply(200, '[]').delay(3000)
  const { client, freshUsed } = clientOver(t, agent, { fresh: [fresh], timeoutMs: 600 })
  await rejectsWith(client.get('/api/posts', call), 'upstream-timeout')
  assert.equal(freshUsed(), 1)
})

test('a body handed over as a stream outlives the whole-call budget (over a real socket)', async () => {
  const chunks = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(200))
  const upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }) // chunked: length unknown
    let sent = 0
    const timer = setInterval(() => {
      res.write(chunks[sent++])
      if (sent === chunks.length) {
        clearInterval(timer)
        res.end()
      }
    }, 100)
  })
  const config = testConfig({ UPSTREAM_TIMEOUT_MS: '300' })
  const client = openUpstreamClient([upstream.url], { timeouts: config.upstreamTimeouts, health: config.upstreamHealth })
  try {
    const response = await client.get('/api/posts', { ...call, maxBytes: 10_000, streamAbove: 100 })
    assert.ok(response.stream !== undefined, 'not streamed')
    assert.equal(await text(response.stream), chunks.join(''), 'the stream was cut by the budget')
  } finally {
    await client.close()
    await upstream.close()
  }
})
