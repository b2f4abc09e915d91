// The front against fake upstreams on loopback: the front's routes, and every row of
// the failure-mapping table (docs/api.md, "Errors").
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { freePort, json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'

const POST = { id: 1, slug: 'hello-world', title: 'Hello', tags: ['a'], published_at: '2026-01-05T09:00:00.000Z' }
const LIST = [POST, { id: 2, slug: 'second', title: 'Second' }]

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream()
  front = await startFront(upstream.url, { timeoutMs: 400, maxListBytes: 64 * 1024 })
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

function hitsDuring<T> (run: () => Promise<T>): Promise<{ result: T, hits: string[] }> {
  const start = upstream.requests.length
  return run().then((result) => ({ result, hits: upstream.requests.slice(start).map((r) => r.url ?? '') }))
}

describe('front routes', () => {
  test('GET /api/blog relays the upstream array byte for byte', async () => {
    const body = JSON.stringify(LIST)
    upstream.behave((_req, res) => json(res, 200, body))
    const { result, hits } = await hitsDuring(() => get(front.url, '/api/blog'))
    assert.equal(result.status, 200)
    assert.match(String(result.headers['content-type']), /^application\/json/)
    assert.equal(result.text, body)
    assert.deepEqual(hits, ['/api/posts'])
  })

  test('GET /api/blog answers 404 when the upstream list is empty', async () => {
    upstream.behave((_req, res) => json(res, 200, []))
    assertProblem(await get(front.url, '/api/blog'), 'no-posts')
  })

  test('GET /api/blog/:slug calls /api/post/:slug and relays the post', async () => {
    upstream.behave((req, res) => json(res, 200, { ...POST, slug: req.url?.split('/').pop() }))
    const { result, hits } = await hitsDuring(() => get(front.url, '/api/blog/hello-world?x=1'))
    assert.equal(result.status, 200)
    assert.deepEqual(result.json(), POST)
    assert.deepEqual(hits, ['/api/post/hello-world'], 'the query string is not forwarded')
  })

  test('upstream 404 on a post is a 404', async () => {
    upstream.behave((_req, res) => json(res, 404, { title: 'Not found' }))
    assertProblem(await get(front.url, '/api/blog/missing-post'), 'post-not-found')
  })

  test('an invalid slug is a 400 and never reaches the upstream', async () => {
    upstream.behave((_req, res) => json(res, 200, POST))
    const { result, hits } = await hitsDuring(() => get(front.url, '/api/blog/Hello-World'))
    assertProblem(result, 'invalid-slug')
    assert.deepEqual(hits, [])
  })

  test('HEAD answers like GET without a body', async () => {
    upstream.behave((_req, res) => json(res, 200, LIST))
    const response = await get(front.url, '/api/blog', {}, 'HEAD')
    assert.equal(response.status, 200)
    assert.equal(response.text, '')
  })

  test('the request id is accepted, passed upstream and echoed; a hostile one is replaced', async () => {
    upstream.behave((_req, res) => json(res, 200, LIST))
    const { result, hits } = await hitsDuring(() => get(front.url, '/api/blog', { 'x-request-id': 'abc-123' }))
    assert.equal(result.headers['x-request-id'], 'abc-123')
    assert.equal(hits.length, 1)
    assert.equal(upstream.requests.at(-1)?.headers['x-request-id'], 'abc-123')
    const replaced = await get(front.url, '/api/blog', { 'x-request-id': 'a b<script>' })
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/)
  })

  test('security headers are on every answer, and no X-Powered-By', async () => {
    for (const response of [await get(front.url, '/api/blog'), await get(front.url, '/nowhere')]) {
      assert.equal(response.headers['x-content-type-options'], 'nosniff')
      assert.equal(response.headers['x-frame-options'], 'DENY')
      assert.match(String(response.headers['content-security-policy']), /default-src 'none'/)
      assert.equal(response.headers['x-powered-by'], undefined)
    }
  })

  test('unknown routes are 404 problems and other methods 405 with Allow', async () => {
    assertProblem(await get(front.url, '/api/blogs'), 'not-found')
    assertProblem(await get(front.url, '/api/blog/a/b'), 'not-found')
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const response = await get(front.url, '/api/blog/hello-world', { 'content-type': 'application/json' }, method)
      assertProblem(response, 'method-not-allowed')
      assert.equal(response.headers.allow, 'GET, HEAD')
    }
  })
})

describe('failure mapping', () => {
  test('connection refused is a 502', async () => {
    const refused = await startFront(new URL(`http://127.0.0.1:${await freePort()}`))
    try {
      assertProblem(await get(refused.url, '/api/blog'), 'upstream-unreachable')
      assertProblem(await get(refused.url, '/api/blog/hello-world'), 'upstream-unreachable')
    } finally {
      await refused.app.close()
    }
  })

  test('a connection reset before any answer is a 502', async () => {
    upstream.behave((req) => req.socket.resetAndDestroy())
    assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-unreachable')
  })

  test('a body cut off mid-way is a 502, never a truncated 200', async () => {
    upstream.behave((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 })
      // Cut as soon as the part is handed to the kernel: no timer, whatever the machine's load.
      res.write('[{"slug":"a"', () => req.socket.destroy())
    })
    assertProblem(await get(front.url, '/api/blog'), 'upstream-unreachable')
  })

  test('an upstream that never answers is a 504 within the configured time-out', async () => {
    upstream.behave(() => {})
    const started = performance.now()
    assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-timeout')
    const elapsed = performance.now() - started
    assert.ok(elapsed >= 350 && elapsed < 2000, `answered after ${elapsed} ms with a 400 ms budget`)
  })

  test('headers then a stalled body is a 504', async () => {
    upstream.behave((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
      res.write('{"slug":')
    })
    assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-timeout')
  })

  test('503 is relayed with its Retry-After, or a default one', async () => {
    upstream.behave((_req, res) => json(res, 503, { title: 'down' }, { 'retry-after': '7' }))
    const relayed = await get(front.url, '/api/blog')
    assertProblem(relayed, 'upstream-unavailable')
    assert.equal(relayed.headers['retry-after'], '7')
    upstream.behave((_req, res) => json(res, 503, { title: 'down' }, { 'retry-after': 'soon, maybe' }))
    const defaulted = await get(front.url, '/api/blog/hello-world')
    assertProblem(defaulted, 'upstream-unavailable')
    assert.equal(defaulted.headers['retry-after'], '5')
  })

  for (const status of [500, 502, 504, 418, 400, 301]) {
    test(`upstream status ${status} is a 502`, async () => {
      upstream.behave((_req, res) => json(res, status, { title: 'x' }, status === 301 ? { location: 'http://127.0.0.1:1/' } : {}))
      assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-bad-response')
      assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
    })
  }

  test('upstream 404 on the list is a 502', async () => {
    upstream.behave((_req, res) => json(res, 404, { title: 'x' }))
    assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
  })

  const badPosts: Array<[string, string]> = [
    ['HTML', '<html>oops</html>'],
    ['truncated JSON', '{'],
    ['an array', '[]'],
    ['an object without slug', '{}'],
    ['a numeric slug', '{"slug":42}'],
    ['another post', '{"slug":"other-post"}'],
    ['null', 'null']
  ]
  for (const [name, body] of badPosts) {
    test(`a post body that is ${name} is a 502`, async () => {
      upstream.behave((_req, res) => json(res, 200, body))
      assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-bad-response')
    })
  }

  // Prototype poisoning: bodies that are otherwise the requested post, which only the parser's
  // protection (secure-json-parse) refuses.
  const poisoned: Array<[string, string]> = [
    ['__proto__', '{"slug":"hello-world","__proto__":{"polluted":1}}'],
    ['constructor.prototype', '{"slug":"hello-world","constructor":{"prototype":{"polluted":1}}}']
  ]
  for (const [key, body] of poisoned) {
    test(`a post body with a ${key} key is a 502, though plain JSON.parse accepts it as the post`, async () => {
      const plain = JSON.parse(body) as { slug: unknown }
      assert.equal(plain.slug, 'hello-world', 'without the protection this body would pass the shape check')
      upstream.behave((_req, res) => json(res, 200, body))
      assertProblem(await get(front.url, '/api/blog/hello-world'), 'upstream-bad-response')
    })
  }

  const badLists: Array<[string, string]> = [
    ['an object', '{"slug":"a"}'],
    ['an array holding a non-post', '[{"slug":"a"},3]'],
    ['an array holding a post without slug', '[{"title":"a"}]'],
    ['not JSON', 'Internal error']
  ]
  for (const [name, body] of badLists) {
    test(`a list body that is ${name} is a 502`, async () => {
      upstream.behave((_req, res) => json(res, 200, body))
      assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
    })
  }

  test('a body over the size limit is a 502, by Content-Length or by counting', async () => {
    const big = JSON.stringify([{ slug: 'a', content: 'x'.repeat(70 * 1024) }])
    upstream.behave((_req, res) => json(res, 200, big))
    assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
    upstream.behave((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }) // chunked, no length
      res.end(big)
    })
    assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
  })

  test('API_URL with a base path prefixes the upstream paths', async () => {
    const prefixed = await startFront(new URL('/blog-backend/', upstream.url))
    try {
      upstream.behave((_req, res) => json(res, 200, LIST))
      const { hits } = await hitsDuring(() => get(prefixed.url, '/api/blog'))
      assert.deepEqual(hits, ['/blog-backend/api/posts'])
    } finally {
      await prefixed.app.close()
    }
  })
})
