// The operational routes of both tiers: /healthz and /readyz answer on each
// tier's port, /metrics where the settings put it; they are for machines: no access line at info,
// no CORS headers, not shed under load, and /readyz fails while the process shuts down.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import type { TierOperationsOptions } from '../../src/ops/operational-routes.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { testConfig } from '../helpers/config.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { fromInject, get } from '../helpers/http.js'
import { logSink } from '../helpers/log-sink.js'
import { createConformance, type OpenApiDocument } from '../helpers/openapi-conformance.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { buildTestFront, listen, silentLogger } from '../helpers/tiers.js'

const ORIGIN = { origin: 'https://reader.example' }

async function withTiers (options: TierOperationsOptions & { logger?: Logger }, run: (tiers: { front: FastifyInstance, posts: FastifyInstance, upstream: FakeUpstream }) => Promise<void>): Promise<void> {
  const upstream = await startFakeUpstream((_req, res) => json(res, 200, { slug: 'hello-world' }))
  const { logger = silentLogger, ...operations } = options
  const front = buildTestFront(upstream.url, { logger, ...operations })
  const posts = buildPostsApp({ store: createCountingStore([{ slug: 'hello-world' }]), logger, cacheControl: 'no-cache', server: testConfig().server, ...operations })
  try {
    await run({ front, posts, upstream })
  } finally {
    await front.close()
    await posts.close()
    await upstream.close()
  }
}

test('both tiers: /healthz and /readyz answer 200 with a small JSON body, never cached; other methods are 405', async () => {
  await withTiers({}, async ({ front, posts }) => {
    for (const app of [front, posts]) {
      for (const [url, body] of [['/healthz', { status: 'ok' }], ['/readyz', { status: 'ready' }]] as const) {
        const answer = await app.inject(url)
        assert.equal(answer.statusCode, 200, url)
        assert.deepEqual(answer.json(), body)
        assert.equal(answer.headers['content-type'], 'application/json')
        assert.equal(answer.headers['cache-control'], 'no-store')
        assert.equal(answer.headers['x-content-type-options'], 'nosniff')
        assert.ok(answer.headers['x-request-id'])
        const head = await app.inject({ method: 'HEAD', url })
        assert.equal(head.statusCode, 200)
        assert.equal(head.body, '')
        const post = fromInject(await app.inject({ method: 'POST', url }))
        assertProblem(post, 'method-not-allowed')
        assert.equal(post.headers.allow, 'GET, HEAD')
      }
    }
  })
})

test('not ready: 503 not-ready problem with the reason', async () => {
  await withTiers({ ready: () => ({ ready: false, reason: 'No upstream post API is in rotation.' }) }, async ({ front }) => {
    const answer = fromInject(await front.inject('/readyz'))
    const problem = assertProblem(answer, 'not-ready')
    assert.equal(problem.detail, 'No upstream post API is in rotation.')
    assert.equal(answer.headers['cache-control'], 'no-store')
    assert.equal(answer.headers['retry-after'], '1')
    assert.equal((await front.inject('/healthz')).statusCode, 200, 'alive all the same')
  })
})

test('/metrics: on each tier with metrics, not without them, nor when the admin port has it', async () => {
  const metrics = createProcessMetrics()
  await withTiers({ metrics }, async ({ front, posts }) => {
    for (const app of [front, posts]) {
      const answer = await app.inject('/metrics')
      assert.equal(answer.statusCode, 200)
      assert.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
      assert.match(answer.body, /^# HELP /m)
      assertProblem(fromInject(await app.inject({ method: 'DELETE', url: '/metrics' })), 'method-not-allowed')
    }
  })
  for (const options of [{}, { metrics: createProcessMetrics(), metricsRoute: false }]) {
    await withTiers(options, async ({ front, posts }) => {
      for (const app of [front, posts]) assertProblem(fromInject(await app.inject('/metrics')), 'not-found')
    })
  }
})

test('the probes\' answers are those the tiers\' OpenAPI documents describe; /metrics is documented where it is', async () => {
  for (const ready of [undefined, () => ({ ready: false as const, reason: 'The post store is not answering.' })]) {
    await withTiers({ metrics: createProcessMetrics(), ready }, async ({ front, posts }) => {
      for (const app of [front, posts]) {
        const document = (await app.inject('/openapi.json')).json<OpenApiDocument & { paths: Record<string, { get: { responses: Record<string, { content?: object }> } }> }>()
        const conformance = createConformance(document)
        for (const [method, url] of [['GET', '/healthz'], ['HEAD', '/healthz'], ['GET', '/readyz'], ['HEAD', '/readyz'], ['POST', '/readyz']] as const) {
          conformance.check(method, url, fromInject(await app.inject({ method, url })))
        }
        assert.deepEqual(Object.keys(document.paths['/metrics']?.get.responses[200]?.content ?? {}), ['text/plain; version=0.0.4; charset=utf-8'])
      }
    })
  }
})

test('probes and scrapes carry no CORS headers, and OPTIONS there is no preflight', async () => {
  await withTiers({ metrics: createProcessMetrics() }, async ({ front }) => {
    const api = await front.inject({ url: '/api/blog/hello-world', headers: ORIGIN })
    assert.equal(api.headers['access-control-allow-origin'], '*', 'the API routes do')
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const answer = await front.inject({ url, headers: ORIGIN })
      assert.equal(answer.statusCode, 200, url)
      assert.deepEqual(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-')), [], url)
      const preflight = await front.inject({ method: 'OPTIONS', url, headers: { ...ORIGIN, 'access-control-request-method': 'GET' } })
      assertProblem(fromInject(preflight), 'method-not-allowed')
      assert.deepEqual(Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-')), [], url)
    }
  })
})

test('probes and scrapes are not logged at info, only at debug', async () => {
  for (const level of ['info', 'debug'] as const) {
    const sink = logSink(level)
    await withTiers({ metrics: createProcessMetrics(), logger: sink.logger }, async ({ front, posts }) => {
      for (const app of [front, posts]) {
        for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await app.inject(url)).statusCode, 200)
      }
      assert.equal((await front.inject('/api/blog/hello-world')).statusCode, 200)
    })
    const lines = sink.lines.filter((line) => line.msg === 'request')
    const probes = lines.filter((line) => line.url !== '/api/blog/hello-world')
    assert.deepEqual(lines.filter((line) => line.level >= 30).map((line) => line.url), ['/api/blog/hello-world'], level)
    assert.equal(probes.length, level === 'debug' ? 6 : 0)
    assert.ok(probes.every((line) => line.level === 20 && line.status === 200 && typeof line.reqId === 'string'))
  }
})

function blockFor (ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) { /* a saturated event loop */ }
}

test('under load shedding, the API answers 503 overloaded and the probes and scrapes still 200', { timeout: 20_000 }, async () => {
  // As test/front/load-shedding.test.ts: block in slices until under-pressure has sampled the
  // delay, then ask before its next sample, a second later.
  const upstream = await startFakeUpstream((_req, res) => json(res, 200, { slug: 'hello-world' }))
  const front = await listen(buildTestFront(upstream.url, { server: testConfig({ LOAD_SHED_DELAY_MS: '50' }).server, metrics: createProcessMetrics() }))
  const pressure = front.app as unknown as { memoryUsage: () => { eventLoopDelay: number } }
  try {
    const started = performance.now()
    while (pressure.memoryUsage().eventLoopDelay <= 50) {
      assert.ok(performance.now() - started < 5000, 'under-pressure never measured the blocked loop')
      blockFor(200)
      await yieldToLoop()
    }
    const [api, healthz, readyz, metrics] = await Promise.all(['/api/blog/hello-world', '/healthz', '/readyz', '/metrics'].map(async (path) => await get(front.url, path)))
    assertProblem(api ?? assert.fail(), 'overloaded')
    assert.deepEqual([healthz?.status, readyz?.status, metrics?.status], [200, 200, 200])
  } finally {
    await front.app.close()
    await upstream.close()
  }
})

/**
 * Node 26 counts a connection whose request head is not complete as idle, so that `close()`
 * drops it at once, without an answer; Node 22 and 24 keep it open until the head is complete.
 */
const DROPS_UNFINISHED_HEADS_AT_CLOSE = Number(process.versions.node.split('.')[0]) >= 26

test('while shutting down, /readyz on a kept-alive connection is 503 shutting-down (Node 26: the connection is closed unanswered)', async () => {
  const running = await listen(buildPostsApp({ store: createCountingStore([]), logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server }))
  const accepted = once(running.app.server, 'connection')
  const socket = connect(running.port, '127.0.0.1')
  const socketClosed = once(socket, 'close')
  try {
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
    // A request under way (its head not yet complete) when the server is asked to close.
    socket.write('GET /readyz HTTP/1.1\r\nHost: blog.example\r\n')
    await accepted
    const closed = running.app.close()
    await pollUntil('the server closing', () => !running.app.server.listening)
    if (!socket.destroyed) socket.end('\r\n')
    await socketClosed
    await closed
    if (DROPS_UNFINISHED_HEADS_AT_CLOSE) {
      assert.equal(received, '', 'no answer, not even a partial one')
      return
    }
    assert.match(received, /^HTTP\/1\.1 503 /)
    assert.match(received, /"type":"urn:blog-read-api:problem:shutting-down"/)
    assert.match(received, /\r\nconnection: close\r\n/i)
  } finally {
    socket.destroy()
  }
})
