// The typed client (`@blog-read-api/client`, from its source) against a running front: over a
// real post API for posts and problems, over fake upstreams for the answers a real one rarely
// gives. The `@ts-expect-error` lines are checked by `npm run typecheck`: each must stay an error.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { BlogApiProblem, createBlogClient, type Post } from '../../packages/client/src/index.js'
import { SAMPLE_POSTS } from '../../src/store/sample-posts.js'
import { createSeededSqlite, type TestDatabase } from '../helpers/databases.js'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { startFront, startTiersOn, type RunningApp, type Tiers } from '../helpers/tiers.js'

/** Resolves to the problem the promise rejects with. */
async function problemOf (promise: Promise<unknown>): Promise<BlogApiProblem> {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof BlogApiProblem, String(err))
    return err
  }
  assert.fail('expected a BlogApiProblem')
}

describe('the typed client against a running front', () => {
  let db: TestDatabase
  let tiers: Tiers
  before(async () => {
    db = await createSeededSqlite()
    tiers = await startTiersOn(db)
  })
  after(async () => {
    await tiers?.close()
    await db?.drop()
  })

  test('listPosts: every post, newest first, every column', async () => {
    const posts: Post[] = await createBlogClient({ baseUrl: tiers.front.url }).listPosts()
    assert.deepEqual(posts.map((post) => post.slug), [...SAMPLE_POSTS].sort((a, b) => b.published_at.getTime() - a.published_at.getTime()).map((post) => post.slug))
    assert.deepEqual(Object.keys(posts[0] ?? {}), ['id', 'slug', 'title', 'summary', 'content', 'author', 'tags', 'published_at', 'updated_at'])
  })

  test('getPost: the post, its slug percent-encoded', async () => {
    const client = createBlogClient({ baseUrl: new URL(tiers.front.url) })
    const post = await client.getPost('two-tiers', { requestId: 'client-test-1' })
    assert.equal(post.slug, 'two-tiers')
    assert.equal(post.title, 'Why two tiers')
    // `/` and `..` stay inside the segment: the front sees an invalid slug, not another path.
    assert.equal((await problemOf(client.getPost('../posts'))).kind, 'invalid-slug')
  })

  test('listPage walks the list a page at a time, trimmed to fields; getPost takes fields too', async () => {
    const client = createBlogClient({ baseUrl: tiers.front.url })
    const slugs: string[] = []
    let after: string | undefined
    do {
      const page = await client.listPage({ limit: 2, fields: ['title'], ...(after === undefined ? {} : { after }) })
      assert.ok(page.posts.length >= 1 && page.posts.length <= 2)
      for (const post of page.posts) assert.deepEqual(Object.keys(post), ['slug', 'title'])
      slugs.push(...page.posts.map((post) => post.slug))
      after = page.after
    } while (after !== undefined)
    assert.deepEqual(slugs, (await client.listPosts()).map((post) => post.slug))
    const trimmed = await client.getPost('two-tiers', { fields: ['author', 'title'] })
    assert.deepEqual(Object.entries(trimmed), [['slug', 'two-tiers'], ['title', 'Why two tiers'], ['author', 'Grace']], 'in the table\'s order')
    assert.deepEqual((await client.listPosts({ tag: 'intro', fields: ['slug'] })).map((post) => post.slug), ['hello-world'])
    assert.deepEqual(await client.listPage({ limit: 5, tag: 'no-such-tag' }), { posts: [], after: undefined })
    // Sorted by title, a page at a time: the cursor belongs to that order.
    const titles: string[] = []
    let sorted: string | undefined
    do {
      const page = await client.listPage({ limit: 1, sort: '-title', fields: ['title'], ...(sorted === undefined ? {} : { after: sorted }) })
      titles.push(...page.posts.map((post) => String(post.title)))
      sorted = page.after
    } while (sorted !== undefined)
    assert.deepEqual(titles, (await client.listPosts({ fields: ['title'] })).map((post) => String(post.title)).sort().reverse())
    for (const attempt of [() => client.listPage({ limit: 0 }), () => client.listPosts({ fields: ['no_such_column'] }), () => client.listPosts({ fields: [] }), () => client.getPost('two-tiers', { fields: ['a-b'] })]) {
      assert.equal((await problemOf(attempt())).kind, 'invalid-query')
    }
  })

  test('formats asks for rendered content on lists, pages and one post', async () => {
    const client = createBlogClient({ baseUrl: tiers.front.url })
    const post = await client.getPost('two-tiers', { formats: ['html', 'text'] })
    assert.match(String(post.content_html), /^<h2 id="two-tiers">Two tiers<\/h2>/)
    assert.match(String(post.content_text), /^Two tiers\n/)
    assert.ok((await client.listPosts({ formats: ['text'] })).every((each) => typeof each.content_text === 'string' && !('content_html' in each)))
    const page = await client.listPage({ limit: 1, fields: ['content'], formats: ['html'] })
    assert.deepEqual(Object.keys(page.posts[0] ?? {}), ['slug', 'content', 'content_html'])
  })

  test('createBlogClient<SamplePost>: posts of that type, trimmed by fields to Pick<SamplePost, slug | F>', async () => {
    interface SamplePost { slug: string, title: string, author: string, tags: string[], published_at: string }
    const client = createBlogClient<SamplePost>({ baseUrl: tiers.front.url })
    const posts: SamplePost[] = await client.listPosts({ tag: 'intro' })
    assert.deepEqual(posts.map((post) => post.tags.includes('intro')), [true])
    const page = await client.listPage({ limit: 1, fields: ['title', 'author'] })
    const first = page.posts[0]
    assert.deepEqual(Object.keys(first ?? {}), ['slug', 'title', 'author'])
    // @ts-expect-error: trimmed to slug, title and author, as the answer is
    assert.equal(first?.tags, undefined)
    const post = await client.getPost('two-tiers', { fields: ['author'] })
    assert.equal(post.author, 'Grace')
    // @ts-expect-error: trimmed to slug and author
    assert.equal(post.title, undefined)
    // @ts-expect-error: not a column of SamplePost (nor of the table)
    assert.equal((await problemOf(client.listPosts({ fields: ['subtitle'] }))).kind, 'invalid-query')
  })

  test('a problem answer is a BlogApiProblem carrying the document', async () => {
    const problem = await problemOf(createBlogClient({ baseUrl: tiers.front.url }).getPost('no-such-post'))
    assert.equal(problem.status, 404)
    assert.equal(problem.kind, 'post-not-found')
    assert.deepEqual(Object.keys(problem.problem).sort(), ['detail', 'status', 'title', 'type'])
    assert.equal(problem.problem.type, 'urn:blog-read-api:problem:post-not-found')
    assert.equal(problem.problem.title, 'Post not found')
    assert.match(problem.message, /^404 Post not found: /)
    const invalid = await problemOf(createBlogClient({ baseUrl: tiers.front.url }).getPost('Not_A_Slug'))
    assert.equal(invalid.status, 400)
    assert.equal(invalid.kind, 'invalid-slug')
  })
})

describe('the typed client over fake upstreams', () => {
  let upstream: FakeUpstream
  let front: RunningApp
  before(async () => {
    upstream = await startFakeUpstream()
    front = await startFront(upstream.url)
  })
  after(async () => {
    await front?.app.close()
    await upstream?.close()
  })

  test('listPosts is [] when there are none (the front\'s 404 no-posts)', async () => {
    upstream.behave((_req, res) => json(res, 200, []))
    assert.deepEqual(await createBlogClient({ baseUrl: front.url }).listPosts(), [])
  })

  test('503 carries its Retry-After; 502 its kind', async () => {
    upstream.behave((_req, res) => json(res, 503, {}, { 'retry-after': '7' }))
    const unavailable = await problemOf(createBlogClient({ baseUrl: front.url }).listPosts())
    assert.equal(unavailable.kind, 'upstream-unavailable')
    assert.equal(unavailable.retryAfter, '7')
    upstream.behave((_req, res) => json(res, 200, 'not a list'))
    assert.equal((await problemOf(createBlogClient({ baseUrl: front.url }).listPosts())).kind, 'upstream-bad-response')
  })
})

describe('the typed client, unit', () => {
  const answer = (body: string, status: number, contentType: string): typeof fetch =>
    async () => new Response(body, { status, statusText: 'Bad Gateway', headers: { 'content-type': contentType } })

  test('an error answer that is no problem document is an about:blank problem with its status', async () => {
    for (const [body, type] of [['<html>proxy error</html>', 'text/html'], ['{"error":"x"}', 'application/json'], ['{', 'application/json']]) {
      const problem = await problemOf(createBlogClient({ baseUrl: 'http://blog.invalid', fetch: answer(body ?? '', 502, type ?? '') }).listPosts())
      assert.equal(problem.problem.type, 'about:blank')
      assert.equal(problem.status, 502)
      assert.equal(problem.kind, undefined)
    }
  })

  test('a base path is kept; the request id and the signal are passed', async () => {
    const seen: Array<{ url: string, init: RequestInit | undefined }> = []
    const recording: typeof fetch = async (url, init) => {
      seen.push({ url: String(url), init })
      return new Response('{"slug":"a"}', { headers: { 'content-type': 'application/json' } })
    }
    const signal = new AbortController().signal
    await createBlogClient({ baseUrl: 'https://example.org/blog', fetch: recording }).getPost('a b', { requestId: 'r-1', signal })
    await createBlogClient({ baseUrl: 'https://example.org/blog/', fetch: recording }).getPost('a')
    assert.equal(seen[0]?.url, 'https://example.org/blog/api/blog/a%20b')
    assert.deepEqual(seen[0]?.init?.headers, { accept: 'application/json', 'x-request-id': 'r-1' })
    assert.equal(seen[0]?.init?.signal, signal)
    assert.equal(seen[1]?.url, 'https://example.org/blog/api/blog/a')
  })

  test('listPage reads the next cursor from the Link header, whatever else it holds', async () => {
    const withLink = (link: string | undefined): typeof fetch => async () =>
      new Response('[{"slug":"a"}]', { headers: { 'content-type': 'application/json', ...(link === undefined ? {} : { link }) } })
    const page = async (link: string | undefined): Promise<string | undefined> =>
      (await createBlogClient({ baseUrl: 'http://blog.invalid', fetch: withLink(link) }).listPage({ limit: 1 })).after
    assert.equal(await page('</api/blog?limit=1&after=WyJhIl0&tag=x>; rel="next"'), 'WyJhIl0')
    assert.equal(await page('</p?after=x>; rel="prev", </api/blog?after=WyJiIl0>; rel=next'), 'WyJiIl0')
    assert.equal(await page('</api/blog?after=WyJiIl0>; rel="nextish"'), undefined)
    assert.equal(await page('</api/blog?limit=1>; rel="next"'), undefined)
    assert.equal(await page(undefined), undefined)
  })
})
