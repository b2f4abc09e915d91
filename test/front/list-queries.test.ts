// The front's list queries over a fake upstream that records every call (routes through
// app.inject: no socket behaviour is under test here): malformed values never reach the
// upstream, valid ones arrive in canonical form, the upstream's 400 invalid-query is relayed and
// nothing else of its 400s, the front's own Link comes from the upstream's cursor only, and
// copies, 304s and coalescing work per distinct query.
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, test } from 'node:test'
import { encodeCursor } from '../../src/contract/cursor.js'
import { etagOf } from '../../src/http/representation.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { json } from '../helpers/fake-upstream.js'
import { parseMetrics, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { useInjectedFront } from '../helpers/injected-front.js'

// Its metrics count the requests that joined a call instead of starting one.
const front = useInjectedFront(undefined, () => ({ metrics: createProcessMetrics() }))

const inject = front.get

/** The upstream paths (with their queries) that `run` caused. */
async function hitsDuring<T> (run: () => Promise<T>): Promise<{ result: T, hits: string[] }> {
  const start = front.upstream.requests.length
  const result = await run()
  return { result, hits: front.upstream.requests.slice(start).map((r) => r.url ?? '') }
}

/** Answers like the post API: a strong ETag from the bytes (and link), 304 when it holds. */
function serve (body: unknown, headers: Record<string, string> = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const text = JSON.stringify(body)
  const etag = etagOf(Buffer.from(text + (headers.link ?? '')))
  return (req, res) => {
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag, ...headers })
      res.end()
    } else {
      json(res, 200, text, { etag, ...headers })
    }
  }
}

const CURSOR = encodeCursor({ slug: 'second', publishedAt: '2024-01-02 03:04:05.678901+00' })
const PAGE = [{ slug: 'first', title: 'First' }, { slug: 'second', title: 'Second' }]

describe('validation before any upstream call', () => {
  const malformed: Array<[string, string]> = [
    ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=-3', 'limit'], ['limit=2.0', 'limit'], ['limit=0x10', 'limit'], ['limit=', 'limit'],
    ['limit=%EF%BC%93', 'limit'], ['limit=2&limit=3', 'limit'],
    ['after=', 'after'], ['after=%7B%7D', 'after'], [`after=${CURSOR}=`, 'after'], [`after=${CURSOR.slice(0, -2)}`, 'after'],
    [`after=${Buffer.from('["a"] ').toString('base64url')}`, 'after'], [`after=${Buffer.from('[1,2]').toString('base64url')}`, 'after'],
    [`after=${Buffer.from('[null,"a","b"]').toString('base64url')}`, 'after'], [`after=${encodeCursor({ slug: 'a\u0000b' })}`, 'after'],
    [`after=${encodeCursor({ slug: 'x'.repeat(201) })}`, 'after'], [`after=${CURSOR}&after=${CURSOR}`, 'after'],
    ['fields=', 'fields'], ['fields=,', 'fields'], ['fields=title,,slug', 'fields'], ['fields=t%C3%ADtle', 'fields'], ['fields=a.b', 'fields'],
    ['fields=9lives', 'fields'], [`fields=${'a'.repeat(64)}`, 'fields'], ['fields=title&fields=slug', 'fields'],
    ['tag=', 'tag'], ['tag=node,', 'tag'], ['tag=%1B', 'tag'], [`tag=${'a'.repeat(101)}`, 'tag'], ['tag_not=', 'tag_not'], ['published_after=2024', 'published_after'],
    ['count=1', 'count']
  ]

  test('a malformed list parameter is a 400 invalid-query naming it, and the upstream is not called', async () => {
    front.upstream.behave(serve(PAGE))
    for (const [search, parameter] of malformed) {
      const { result, hits } = await hitsDuring(() => inject(`/api/blog?${search}`))
      const problem = assertProblem(result, 'invalid-query')
      assert.match(String(problem.detail), new RegExp(`\\b${parameter}\\b`), search)
      assert.deepEqual(hits, [], search)
    }
  })

  test('a malformed fields on a post is a 400 too; the other list parameters are ignored there', async () => {
    front.upstream.behave((req, res) => json(res, 200, { slug: 'hello-world', title: 'Hello', url: req.url }))
    for (const search of ['fields=', 'fields=a-b', 'fields=slug&fields=title']) {
      const { result, hits } = await hitsDuring(() => inject(`/api/blog/hello-world?${search}`))
      assertProblem(result, 'invalid-query')
      assert.deepEqual(hits, [])
    }
    const { result, hits } = await hitsDuring(() => inject('/api/blog/hello-world?limit=0&tag=%20&after=x'))
    assert.equal(result.status, 200)
    assert.deepEqual(hits, ['/api/post/hello-world'])
  })

  test('an invalid slug is still refused first', async () => {
    const { result, hits } = await hitsDuring(() => inject('/api/blog/Not_A_Slug?fields=title'))
    assertProblem(result, 'invalid-slug')
    assert.deepEqual(hits, [])
  })
})

describe('relaying valid parameters', () => {
  test('an unknown or repeated parameter is a 400 invalid-query naming it, and the upstream is not called', async () => {
    front.upstream.behave(serve(PAGE))
    for (const [path, named] of [
      ['/api/blog?tag=sql&utm_source=x', /Unknown parameter "utm_source"/], ['/api/blog?page=2&limit_=3', /Unknown parameters "page", "limit_"/],
      ['/api/blog?fields=title&fields=slug', /Repeated parameter "fields"/]
    ] as const) {
      const { result, hits } = await hitsDuring(() => inject(path))
      assert.match(String(assertProblem(result, 'invalid-query').detail), named, path)
      assert.deepEqual(hits, [], path)
    }
  })

  test('valid parameters arrive unchanged, in canonical order', async () => {
    front.upstream.behave(serve(PAGE))
    const cases: Array<[string, string]> = [
      ['/api/blog?tag=sql&limit=5&fields=title,slug', '/api/posts?limit=5&fields=slug,title&tag=sql'],
      [`/api/blog?after=${CURSOR}&limit=1000`, `/api/posts?limit=1000&after=${CURSOR}`],
      ['/api/blog?fields=title%2Cauthor', '/api/posts?fields=author,slug,title'],
      ['/api/blog?fields=slug', '/api/posts?fields=slug'],
      ['/api/blog?', '/api/posts'],
      ['/api/blog/hello-world?fields=title&limit=3', '/api/post/hello-world?fields=slug,title']
    ]
    for (const [path, expected] of cases) {
      if (path.startsWith('/api/blog/')) front.upstream.behave((_req, res) => json(res, 200, { slug: 'hello-world', title: 'Hello' }))
      const { result, hits } = await hitsDuring(() => inject(path))
      assert.equal(result.status, 200, `${path}: ${result.text}`)
      assert.deepEqual(hits, [expected], path)
    }
  })

  test('the upstream\'s 400 invalid-query is relayed as a 400 with the same detail', async () => {
    const detail = 'The fields parameter names nope, which is not a column of the posts table.'
    front.upstream.behave((_req, res) => json(res, 400, { type: 'urn:blog-read-api:problem:invalid-query', title: 'Invalid query', status: 400, detail },
      { 'content-type': 'application/problem+json' }))
    for (const path of ['/api/blog?fields=nope', '/api/blog?fields=nope&limit=2', '/api/blog/hello-world?fields=nope']) {
      assert.equal(assertProblem(await inject(path), 'invalid-query').detail, detail, path)
    }
  })

  test('any other 400 of the upstream stays a 502', async () => {
    const bodies: unknown[] = [
      { type: 'urn:blog-read-api:problem:invalid-slug', title: 'Invalid slug', status: 400, detail: 'x' },
      { type: 'urn:blog-read-api:problem:invalid-query', status: 400 },
      { type: 'urn:blog-read-api:problem:invalid-query', detail: 'x'.repeat(501) },
      { type: 'urn:blog-read-api:problem:invalid-query', detail: 'line\nbreak' },
      '<html>bad request</html>', '{"__proto__":{"type":"urn:blog-read-api:problem:invalid-query","detail":"x"}}'
    ]
    for (const body of bodies) {
      front.upstream.behave((_req, res) => json(res, 400, body))
      assertProblem(await inject('/api/blog?fields=title'), 'upstream-bad-response')
    }
    // Without list parameters, a 400 is never the client's mistake.
    front.upstream.behave((_req, res) => json(res, 400, { type: 'urn:blog-read-api:problem:invalid-query', detail: 'x' }))
    assertProblem(await inject('/api/blog'), 'upstream-bad-response')
    assertProblem(await inject('/api/blog/hello-world'), 'upstream-bad-response')
  })
})

describe('links and pages', () => {
  test('the front\'s Link is its own, built from the upstream\'s cursor only; CORS exposes it', async () => {
    front.upstream.behave(serve(PAGE, { link: `<http://evil.example/steal?limit=999&after=${CURSOR}&tag=x>; rel="next"` }))
    const { result, hits } = await hitsDuring(() => inject('/api/blog?limit=2&fields=title', { origin: 'https://reader.example' }))
    assert.equal(result.status, 200)
    assert.equal(result.headers.link, `</api/blog?limit=2&after=${CURSOR}&fields=slug,title>; rel="next"`)
    assert.match(String(result.headers['access-control-expose-headers']), /\bLink\b/)
    assert.deepEqual(hits, ['/api/posts?limit=2&fields=slug,title'], 'the link is never followed')
    // Other links and parameters do not matter; several links in one header are read.
    front.upstream.behave(serve(PAGE, { link: `</x>; rel="prev", </api/posts?after=${CURSOR}>; rel="next last"` }))
    assert.equal((await inject('/api/blog?limit=2')).headers.link, `</api/blog?limit=2&after=${CURSOR}>; rel="next"`)
  })

  test('no Link without a limit, whatever the upstream says; a page without one is the last', async () => {
    front.upstream.behave(serve(PAGE, { link: `</api/posts?after=${CURSOR}>; rel="next"` }))
    assert.equal((await inject('/api/blog')).headers.link, undefined)
    front.upstream.behave(serve(PAGE))
    assert.equal((await inject('/api/blog?limit=5')).headers.link, undefined)
  })

  test('a next link without a valid cursor, or more posts than the limit, is a 502', async () => {
    for (const link of ['</api/posts?limit=2>; rel="next"', '</api/posts?limit=2&after=bogus>; rel="next"', `<${CURSOR}>; rel=next`]) {
      front.upstream.behave(serve(PAGE, { link }))
      assertProblem(await inject('/api/blog?limit=2'), 'upstream-bad-response')
    }
    front.upstream.behave(serve([...PAGE, { slug: 'third' }]))
    assertProblem(await inject('/api/blog?limit=2'), 'upstream-bad-response')
  })

  test('an empty list or page is a 404 no-posts whose detail names the filters that matched nothing', async () => {
    front.upstream.behave(serve([]))
    for (const [path, detail] of [
      ['/api/blog', 'There are no posts yet.'],
      [`/api/blog?limit=3&after=${CURSOR}`, 'No post follows this cursor.'],
      ['/api/blog?tag=nothing', 'No post matches tag=nothing.'],
      ['/api/blog?tag_not=a&tag_all=Node.js,C%2B%2B&updated_after=2024-05-01T10:00:00%2B02:00&limit=2', 'No post matches tag_all=C++,Node.js and tag_not=a and updated_after=2024-05-01T08:00:00Z.'],
      [`/api/blog?published_before=2020-01-01&after=${CURSOR}&limit=1`, 'No post matches published_before=2020-01-01T00:00:00Z after this cursor.']
    ] as const) {
      assert.equal(assertProblem(await inject(path), 'no-posts').detail, detail, path)
    }
  })
})

describe('caching per distinct query', () => {
  test('each query has its copy, revalidated with its own ETag; spellings of one query share it; 304 per query', async () => {
    // A body per path, so that each query has its own validator.
    front.upstream.behave((req, res) => serve([{ slug: 'first', path: req.url }])(req, res))
    const one = await inject('/api/blog?limit=1')
    const two = await inject('/api/blog?limit=2')
    assert.notEqual(one.headers.etag, two.headers.etag)
    const { hits } = await hitsDuring(async () => {
      assert.equal((await inject('/api/blog?fields=title,slug&limit=1')).status, 200)
      assert.equal((await inject('/api/blog?limit=1&fields=slug,title,title')).status, 200)
    })
    assert.deepEqual(hits, ['/api/posts?limit=1&fields=slug,title', '/api/posts?limit=1&fields=slug,title'])
    const revalidations = front.upstream.requests.slice(-2).map((r) => r.headers['if-none-match'])
    assert.equal(revalidations[0], undefined, 'the first call of a query holds no copy yet')
    assert.equal(typeof revalidations[1], 'string', 'the second spelling revalidates the first one\'s copy')
    assert.equal((await inject('/api/blog?limit=1', { 'if-none-match': String(one.headers.etag) })).status, 304)
    assert.equal((await inject('/api/blog?limit=2', { 'if-none-match': String(one.headers.etag) })).status, 200)
  })

  test('identical concurrent queries share a call; different ones do not', async () => {
    // The upstream answers once every request has made its call or joined one (whatever the
    // machine's speed); calls made after that are answered at once.
    const calls: string[] = []
    const held: Array<() => void> = []
    front.upstream.behave((req, res) => {
      calls.push(req.url ?? '')
      held.push(() => serve(PAGE)(req, res))
      if (calls.length > 3) held.shift()?.()
    })
    const joined = async (): Promise<number> => valueOf(parseMetrics((await inject('/metrics')).text), 'blog_read_api_upstream_coalesced_requests_total')
    const joinedBefore = await joined()
    // The first of each query makes a call; those arriving while it runs share the next one.
    const answers = Promise.all(['limit=2', 'limit=2', 'limit=2', 'limit=2', 'limit=3', 'limit=3', 'limit=3', 'tag=a'].map(async (search) => {
      assert.equal((await inject(`/api/blog?${search}`)).status, 200)
    }))
    try {
      await pollUntil('a call per query, the other five requests waiting for the next', async () => calls.length === 3 && await joined() - joinedBefore === 5)
    } finally {
      for (const answer of held.splice(0)) answer()
    }
    await answers
    assert.deepEqual(calls.sort(), ['/api/posts?limit=2', '/api/posts?limit=2', '/api/posts?limit=3', '/api/posts?limit=3', '/api/posts?tag=a'])
  })
})
