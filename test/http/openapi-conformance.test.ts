// Both tiers' answers, as running servers give them, match their own OpenAPI documents: the
// status is documented for the operation, the headers and the body validate against it (ajv).
// The post API over a real SQLite store; the front over that post API and over fake upstreams
// for every failure it maps.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import { createSeededSqlite, type TestDatabase } from '../helpers/databases.js'
import { freePort, json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { request as undiciRequest } from 'undici'
import { fromInject, get, type TestResponse } from '../helpers/http.js'
import { createConformance, type Conformance, type OpenApiDocument } from '../helpers/openapi-conformance.js'
import { asTestResponse, rawRequest } from '../helpers/raw-http.js'
import { startFront, startTiersOn, type RunningApp, type Tiers } from '../helpers/tiers.js'

/** A GET as `get` gives it, with a compressed body decoded (the body is checked as JSON). */
async function getDecoded (base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> {
  const response = await undiciRequest(new URL(path, base), { method: method as 'GET', headers })
  const bytes = Buffer.from(await response.body.arrayBuffer())
  const encoding = response.headers['content-encoding']
  const text = (encoding === 'br' ? brotliDecompressSync(bytes) : encoding === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8')
  return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) }
}

async function conformanceOf (tier: RunningApp): Promise<Conformance> {
  const answer = await get(tier.url, '/openapi.json')
  assert.equal(answer.status, 200)
  return createConformance(answer.json() as OpenApiDocument)
}

/** Requests a tier and checks each answer against its document; remembers what each matched. */
function checker (tier: () => RunningApp, conformance: () => Conformance): {
  request: (path: string, headers?: Record<string, string>, method?: string) => Promise<TestResponse>
  inject: (options: { method: 'GET', url: string, payload: string }) => Promise<TestResponse>
  /** `GET path` as raw bytes, with `version` and `headers` as written: what the edge refuses. */
  raw: (path: string, version: string, headers: string) => Promise<TestResponse>
  matched: Set<string>
} {
  const matched = new Set<string>()
  return {
    matched,
    async request (path, headers = {}, method = 'GET') {
      const response = await getDecoded(tier().url, path, headers, method)
      matched.add(conformance().check(method, path, response))
      return response
    },
    async raw (path, version, headers) {
      const response = asTestResponse(await rawRequest(tier().port, `GET ${path} ${version}\r\nHost: 127.0.0.1\r\n${headers}\r\n`))
      matched.add(conformance().check('GET', path, response))
      return response
    },
    async inject (options) {
      const response = fromInject(await tier().app.inject({ ...options, headers: { 'content-type': 'application/json' } }))
      matched.add(conformance().check(options.method, options.url, response))
      return response
    }
  }
}

describe('the post API answers as its OpenAPI document says', () => {
  let db: TestDatabase
  let tiers: Tiers
  let conformance: Conformance
  const { request, inject, raw, matched } = checker(() => tiers.posts, () => conformance)

  before(async () => {
    db = await createSeededSqlite()
    tiers = await startTiersOn(db)
    conformance = await conformanceOf(tiers.posts)
  })
  after(async () => {
    await tiers?.close()
    await db?.drop()
  })

  test('lists and posts: 200 (plain, compressed, HEAD), 304', async () => {
    const list = await request('/api/posts', { 'accept-encoding': 'identity' })
    assert.equal(list.status, 200)
    assert.equal((await request('/api/posts', { 'accept-encoding': 'br', 'x-request-id': 'conformance-1' })).headers['content-encoding'], 'br')
    assert.equal((await request('/api/posts', {}, 'HEAD')).status, 200)
    assert.equal((await request('/api/posts', { 'if-none-match': String(list.headers.etag) })).status, 304)
    const post = await request('/api/post/hello-world')
    assert.equal(post.status, 200)
    assert.equal((await request('/api/post/hello-world', { 'if-none-match': String(post.headers.etag) })).status, 304)
    assert.equal((await request('/api/post/hello-world?fields=title')).status, 200)
  })

  test('pages with their Link, and 400 invalid-query', async () => {
    const page = await request('/api/posts?limit=1&fields=title&tag=intro')
    assert.equal(page.status, 200)
    const first = await request('/api/posts?limit=2')
    assert.match(String(first.headers.link), /rel="next"/)
    assert.equal((await request('/api/posts?limit=2', { 'if-none-match': String(first.headers.etag) })).status, 304)
    assert.equal((await request('/api/posts?limit=0')).status, 400)
    assert.equal((await request('/api/posts?sort_by=title')).status, 400)
    const tags = await request('/api/posts/tags')
    assert.equal(tags.status, 200)
    assert.equal((await request('/api/posts/tags', { 'if-none-match': String(tags.headers.etag) })).status, 304)
    const counted = await request('/api/posts?limit=1&count=exact&tag=intro,C%2B%2B&published_after=2000-01-01')
    assert.match(String(counted.headers['x-total-count']), /^\d+$/)
    assert.equal((await request('/api/posts?limit=1&count=exact&tag=intro,C%2B%2B&published_after=2000-01-01', { 'if-none-match': String(counted.headers.etag) })).status, 304)
    assert.equal((await request('/api/post/hello-world?fields=no_such_column')).status, 400)
  })

  test('problems: 400, 404, 405, 413, 417, 505, and 503 while the store is down', async () => {
    assert.equal((await request(`/api/post/${'a'.repeat(201)}`)).status, 400)
    assert.equal((await request('/api/post/%E0%A4%A')).status, 400)
    assert.equal((await request('/api/post/no-such-post')).status, 404)
    assert.equal((await request('/api/nowhere')).status, 404)
    assert.equal((await request('/api/posts', {}, 'DELETE')).status, 405)
    assert.equal((await inject({ method: 'GET', url: '/api/posts', payload: '{}' })).status, 413)
    // Refused by the edge, below the framework.
    assert.equal((await raw('/api/post/hello-world', 'HTTP/1.1', 'Expect: a-miracle\r\n')).status, 417)
    assert.equal((await raw('/api/posts', 'HTTP/1.2', '')).status, 505)
    await db.exec('ALTER TABLE posts RENAME TO posts_away')
    try {
      assert.equal((await request('/api/posts')).status, 503)
      assert.equal((await request('/api/post/hello-world')).status, 503)
    } finally {
      await db.exec('ALTER TABLE posts_away RENAME TO posts')
    }
  })

  test('every answer above matched the operation it reached', () => {
    assert.deepEqual([...matched].sort(), [
      '/api/post/{slug} 200', '/api/post/{slug} 304', '/api/post/{slug} 400', '/api/post/{slug} 404', '/api/post/{slug} 417',
      '/api/post/{slug} 503', '/api/posts 200', '/api/posts 304', '/api/posts 400', '/api/posts 413', '/api/posts 503', '/api/posts 505', '/api/posts/tags 200', '/api/posts/tags 304',
      'components.responses.MethodNotAllowed', 'components.responses.NotFound'
    ])
  })

  test('the front over this post API: 200 and 304 relayed, pages, and the relayed 400 invalid-query', async () => {
    const front = await conformanceOf(tiers.front)
    for (const path of ['/api/blog?limit=0', '/api/blog?tags=sql', '/api/blog?fields=no_such_column', '/api/blog/two-tiers?fields=no_such_column']) {
      const refused = await getDecoded(tiers.front.url, path)
      assert.equal(refused.status, 400)
      front.check('GET', path, refused)
    }
    for (const [path, headers] of [['/api/blog', { 'accept-encoding': 'gzip' }], ['/api/blog/two-tiers', {}], ['/api/blog?limit=2&fields=title', {}], ['/api/blog?limit=1&count=exact', {}], ['/api/tags', {}]] as const) {
      const answer = await getDecoded(tiers.front.url, path, headers)
      front.check('GET', path, answer)
      front.check('GET', path, await getDecoded(tiers.front.url, path, { 'if-none-match': String(answer.headers.etag) }))
    }
  })
})

describe('the front answers as its OpenAPI document says, whatever the upstream does', () => {
  let upstream: FakeUpstream
  let front: RunningApp
  let conformance: Conformance
  const started: RunningApp[] = []
  const { request, inject, matched } = checker(() => front, () => conformance)

  const posts = [{ slug: 'first', title: 'First', extra: { nested: [1, null] } }, { slug: 'second', title: null }]
  /** The upstream's answers, by path. */
  function upstreamAnswers (list: (res: ServerResponse) => void, post: (res: ServerResponse, slug: string) => void): void {
    upstream.behave((req, res) => {
      const slug = /^\/api\/post\/(.+)$/.exec(req.url ?? '')?.[1]
      if (slug === undefined) list(res)
      else post(res, slug)
    })
  }

  async function another (options: Parameters<typeof startFront>[1], url = upstream.url): Promise<RunningApp> {
    const app = await startFront(url, options)
    started.push(app)
    return app
  }

  before(async () => {
    upstream = await startFakeUpstream()
    front = await another({})
    conformance = await conformanceOf(front)
  })
  after(async () => {
    for (const app of started) await app.app.close()
    await upstream?.close()
  })

  test('200 and 304, list and post', async () => {
    upstreamAnswers((res) => json(res, 200, posts), (res, slug) => json(res, 200, posts.find((post) => post.slug === slug)))
    const list = await request('/api/blog')
    assert.equal(list.status, 200)
    assert.equal((await request('/api/blog', { 'if-none-match': String(list.headers.etag) })).status, 304)
    const post = await request('/api/blog/first', { 'x-request-id': 'front-conformance' })
    assert.equal(post.status, 200)
    assert.equal((await request('/api/blog/first', { 'if-none-match': String(post.headers.etag) }, 'HEAD')).status, 304)
  })

  test('400, 404 (no posts, no such post, no route), 405, 413', async () => {
    upstreamAnswers((res) => json(res, 200, []), (res) => json(res, 404, { type: 'urn:blog-read-api:problem:post-not-found' }))
    assert.equal((await request('/api/blog/Not_A_Slug')).status, 400)
    assert.equal((await request('/api/blog')).status, 404)
    assert.equal((await request('/api/blog/missing')).status, 404)
    assert.equal((await request('/api/blog/a/b')).status, 404)
    assert.equal((await request('/api/blog', {}, 'POST')).status, 405)
    assert.equal((await inject({ method: 'GET', url: '/api/blog', payload: '{}' })).status, 413)
  })

  test('502 (bad answer, nobody there, none in rotation), 503 with the upstream\'s Retry-After, 504', async () => {
    upstreamAnswers((res) => json(res, 500, 'oops'), (res) => json(res, 200, '<html>'))
    assert.equal((await request('/api/blog')).status, 502)
    assert.equal((await request('/api/blog/first')).status, 502)
    upstreamAnswers((res) => json(res, 503, {}, { 'retry-after': '7' }), (res) => json(res, 503, {}, { 'retry-after': '7' }))
    const unavailable = await request('/api/blog/first')
    assert.equal(unavailable.status, 503)
    assert.equal(unavailable.headers['retry-after'], '7')

    // Nothing listens there; after one failure it leaves rotation, is still tried, and the 502 carries a Retry-After.
    front = await another({ ejectFailures: 1 }, new URL(`http://127.0.0.1:${await freePort()}`))
    assert.equal((await request('/api/blog')).status, 502)
    const again = await request('/api/blog')
    assert.equal(again.status, 502)
    assert.ok(again.headers['retry-after'] !== undefined)

    upstreamAnswers(() => {}, () => {})
    front = await another({ timeoutMs: 200 })
    assert.equal((await request('/api/blog')).status, 504)
  })

  test('a stale copy served when the upstream fails carries Cache-Status', async () => {
    front = await another({ staleIfErrorS: 60 })
    // Only a body with the upstream's ETag is held, to be revalidated.
    upstreamAnswers((res) => json(res, 200, posts, { etag: '"list-1"' }), (res, slug) => json(res, 200, posts.find((post) => post.slug === slug), { etag: `"${slug}-1"` }))
    assert.equal((await request('/api/blog/second')).status, 200)
    upstreamAnswers((res) => json(res, 503, {}), (res) => json(res, 503, {}))
    const stale = await request('/api/blog/second')
    assert.equal(stale.status, 200)
    assert.match(String(stale.headers['cache-status']), /fwd=stale/)
  })

  test('every answer above matched the operation it reached', () => {
    assert.deepEqual([...matched].sort(), [
      '/api/blog 200', '/api/blog 304', '/api/blog 404', '/api/blog 413', '/api/blog 502', '/api/blog 504',
      '/api/blog/{slug} 200', '/api/blog/{slug} 304', '/api/blog/{slug} 400', '/api/blog/{slug} 404', '/api/blog/{slug} 502', '/api/blog/{slug} 503',
      'components.responses.MethodNotAllowed', 'components.responses.NotFound'
    ])
  })
})
