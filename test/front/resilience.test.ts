// The front's fault mechanisms against misbehaving upstreams on loopback: one retry on a fresh
// connection after a reset, none after a refusal, redirects never followed, a lone upstream out
// of rotation (still tried) and back, and stale-if-error. The keep-alive race is in
// keep-alive-race.test.ts, the size and body limits in limits.test.ts.
import assert from 'node:assert/strict'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { createConnection, createServer } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { freePort, json, startFakeUpstream, type FakeUpstream, type UpstreamBehaviour } from '../helpers/fake-upstream.js'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { get, type TestResponse } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'

const POST = { slug: 'hello-world', title: 'Hello' }

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream()
  front = await startFront(upstream.url, { timeoutMs: 1000 })
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

/** Counts the front's TCP connection attempts to `port` (undici publishes each one). */
function countConnectAttempts (port: number): { attempts: () => number, stop: () => void } {
  let attempts = 0
  const onConnect = (message: unknown): void => {
    if (String((message as { connectParams: { port: unknown } }).connectParams.port) === String(port)) attempts++
  }
  subscribe('undici:client:beforeConnect', onConnect)
  return { attempts: () => attempts, stop: () => unsubscribe('undici:client:beforeConnect', onConnect) }
}

async function timed (run: () => Promise<TestResponse>): Promise<{ response: TestResponse, ms: number }> {
  const started = performance.now()
  const response = await run()
  return { response, ms: performance.now() - started }
}

describe('retries', () => {
  test('a reset before any answer, on the first request only: 200 after exactly 2 upstream hits', async () => {
    let hits = 0
    upstream.behave((req, res) => {
      if (++hits === 1) req.socket.resetAndDestroy()
      else json(res, 200, POST)
    })
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)
    assert.equal(hits, 2)
  })

  test('a reset on every request: 502 after exactly 2 upstream hits per request', async () => {
    let hits = 0
    upstream.behave((req) => {
      hits++
      req.socket.resetAndDestroy()
    })
    for (let i = 1; i <= 3; i++) {
      assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-unreachable')
      assert.equal(hits, 2 * i, 'one retry, never more')
    }
  })

  test('connection refused: 502 at once (long before any time-out), one connect attempt per request (no retry storm)', async () => {
    const port = await freePort()
    const refused = await startFront(new URL(`http://127.0.0.1:${port}`))
    const counter = countConnectAttempts(port)
    try {
      for (let i = 1; i <= 20; i++) {
        const { response, ms } = await timed(() => get(refused.url, '/api/blog/hello-world'))
        assertProblem(response, 'upstream-unreachable')
        // A wide margin (a busy 2-core machine): what matters is no wait for the 2 s connect time-out.
        assert.ok(ms < 1000, `answered in ${ms.toFixed(0)} ms`)
        assert.equal(counter.attempts(), i, 'refusal is never retried')
      }
      // 20 at once: still at most one attempt each.
      const burst = await Promise.all(Array.from({ length: 20 }, () => get(refused.url, '/api/blog')))
      for (const response of burst) assertProblem(response, 'upstream-unreachable')
      assert.ok(counter.attempts() <= 40, `${counter.attempts()} attempts for 40 requests`)
    } finally {
      counter.stop()
      await refused.app.close()
    }
  })
})

test('an upstream redirect is never followed: 502, and the redirect target gets 0 connections', async () => {
  let targetConnections = 0
  const target = createServer((socket) => {
    targetConnections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  const targetPort = (target.address() as { port: number }).port
  try {
    for (const status of [302, 307]) {
      upstream.behave((req, res) => {
        res.writeHead(status, { location: `http://127.0.0.1:${targetPort}${req.url ?? '/'}`, 'content-length': 0 })
        res.end()
      })
      assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-bad-response')
      assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
    }
    // A connection of our own, after the answers: the target accepts connections in the order
    // they came, so once it has ours, any the front made before its answers were counted too.
    const ours = createConnection(targetPort, '127.0.0.1')
    ours.on('error', () => {})
    await pollUntil('our own connection accepted', () => targetConnections > 0)
    ours.destroy()
    assert.equal(targetConnections, 1, 'only ours')
  } finally {
    await new Promise((resolve) => target.close(resolve))
  }
})

test('a lone upstream refusing 3 times leaves rotation: still tried, its refusals answered with Retry-After; back at the first call once it returns', async () => {
  const port = await freePort()
  const front = await startFront(new URL(`http://127.0.0.1:${port}`), { ejectFailures: 3, probeIntervalMs: 100 })
  let back: FakeUpstream | undefined
  try {
    for (let i = 0; i < 3; i++) assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-unreachable')
    for (let i = 0; i < 5; i++) {
      const response = await get(front.url, '/api/blog/hello-world')
      assertProblem(response, 'upstream-unreachable')
      assert.match(String((response.json() as { detail: unknown }).detail), /No upstream is in rotation/)
      assert.equal(response.headers['retry-after'], '1')
    }
    back = await startFakeUpstream((req, res) => {
      if (req.url === '/readyz') json(res, 404, { title: 'Not found' })
      else json(res, 200, POST)
    }, port)
    // Out of rotation, it is still called: the first call once it listens is served, whether or
    // not a probe (every 100 ms) brought it back before.
    for (let i = 0; i < 6; i++) assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)
    // The first call once it listened brought it back, unless a probe came first.
    const paths = back.requests.map((r) => r.url)
    assert.deepEqual(paths.filter((p) => p !== '/readyz'), Array(6).fill('/api/post/hello-world'))
  } finally {
    await front.app.close()
    await back?.close()
  }
})

describe('stale-if-error', () => {
  // The front keeps only bodies with a strong validator, so the good answer carries an ETag.
  const good: UpstreamBehaviour = (req, res) => json(res, 200, req.url?.startsWith('/api/posts') === true ? [POST] : POST, { etag: '"v1"' })
  const failures: Array<[string, UpstreamBehaviour, 502 | 503 | 504, 'upstream-bad-response' | 'upstream-unavailable' | 'upstream-timeout']> = [
    ['a 500', (_req, res) => json(res, 500, { title: 'boom' }), 502, 'upstream-bad-response'],
    ['a hang', () => {}, 504, 'upstream-timeout'],
    ['a 503', (_req, res) => json(res, 503, { title: 'down' }, { 'retry-after': '2' }), 503, 'upstream-unavailable']
  ]

  test('on: the last good copy, flagged with Cache-Status and the status it replaces, on a post, a list and the documents made from one', async () => {
    const site = parseSiteUrl('https://blog.example/')
    const stale = await startFront(upstream.url, { timeoutMs: 300, staleIfErrorS: 60, feeds: { site: { url: site, postUrl: createPostUrl(site) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 } })
    try {
      for (const path of ['/api/blog/hello-world', '/api/blog', '/feed.xml', '/feed.json', '/sitemap.xml']) {
        for (const [name, failure, status] of failures) {
          upstream.behave(good)
          const fresh = await get(stale.url, path)
          assert.equal(fresh.status, 200, path)
          assert.equal(fresh.headers['cache-status'], undefined, `${path}: a fresh answer is not flagged`)
          upstream.behave(failure)
          const served = await get(stale.url, path)
          assert.equal(served.status, 200, `${path}, ${name}: ${served.text}`)
          assert.equal(served.text, fresh.text, `${path}: the last good copy`)
          assert.match(String(served.headers['cache-status']), new RegExp(`fwd-status=${status}(;|$)`), `${path}, ${name}`)
        }
      }
    } finally {
      await stale.app.close()
    }
  })

  test('off (staleIfErrorS: 0): the same failures are the mapped problems', async () => {
    const strict = await startFront(upstream.url, { timeoutMs: 300, staleIfErrorS: 0 })
    try {
      for (const [, failure, , kind] of failures) {
        upstream.behave(good)
        assert.equal((await get(strict.url, '/api/blog/hello-world')).status, 200)
        upstream.behave(failure)
        assertProblem(await get(strict.url, '/api/blog/hello-world'), kind)
      }
    } finally {
      await strict.app.close()
    }
  })
})

test('the shared front still answers after all of the above', async () => {
  upstream.behave((_req, res) => json(res, 200, POST))
  assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)
})
