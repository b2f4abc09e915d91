// Rendered content and computed fields through both tiers over real HTTP and a real SQLite file:
// `formats=html,text` adds `content_html` and `content_text`, the computed fields come only when
// named in `fields` (the body is read for them and left out), every rendering happens once per
// content (not per request, not again after a commit to another post), and a malformed `formats`
// is refused by the front before any upstream call.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { testConfig } from '../helpers/config.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { listen, silentLogger, startFront, type RunningApp } from '../helpers/tiers.js'

const CONTENT_A = '# Hello *world*\n\nSee [docs](/docs) and <script>alert(1)</script> [bad](javascript:alert(1)).'
const CONTENT_B = 'Second post, with a few words.'

let database: TestDatabase
let store: PostStore
let posts: RunningApp
let front: RunningApp
const rendered: string[] = []

before(async () => {
  database = await sqliteServer.create()
  const writer = await openTestStore(database.location, { writable: true })
  await writer.migrate()
  await writer.close()
  await database.exec(`INSERT INTO posts (id, slug, title, summary, content, published_at) VALUES
    (1, 'a', 'A', NULL, '${CONTENT_A.replaceAll("'", "''")}', '2024-05-02T00:00:00Z'),
    (2, 'b', 'B', 'The summary of B', '${CONTENT_B}', '2024-05-01T00:00:00Z')`)
  store = await openTestStore(database.location)
  await store.checkSchema()
  const render = createMarkdownRenderer()
  const renderer = (source: string): ReturnType<typeof render> => {
    rendered.push(source)
    return render(source)
  }
  posts = await listen(buildPostsApp({ ...postsAppOptions(testConfig(), { store, logger: silentLogger }), renderer }))
  front = await startFront(new URL(posts.url))
})
after(async () => {
  await front.app.close()
  await posts.app.close()
  await store.close()
  await database.drop()
})

const tiers = (): Array<[string, string, string]> => [['front', front.url, '/api/blog'], ['post API', posts.url, '/api/posts']]
const detail = (route: string): string => route === '/api/blog' ? '/api/blog' : '/api/post'

describe('formats', () => {
  test('formats=html,text adds content_html and content_text on the list and the detail routes of both tiers', async () => {
    for (const [name, base, route] of tiers()) {
      const one = await get(base, `${detail(route)}/a?formats=html,text`)
      assert.equal(one.status, 200, name)
      const post = one.json() as Record<string, unknown>
      assert.equal(post.content, CONTENT_A, name)
      assert.match(String(post.content_html), /^<h1 id="hello-world">Hello <em>world<\/em><\/h1>/, name)
      assert.match(String(post.content_html), /<a href="\/docs">docs<\/a>/, name)
      assert.match(String(post.content_html), /&lt;script&gt;/, name)
      assert.doesNotMatch(String(post.content_html), /href="javascript:|<script/, name)
      assert.match(String(post.content_text), /^Hello world\n/, name)
      const list = (await get(base, `${route}?formats=text`)).json() as Array<Record<string, unknown>>
      assert.deepEqual(list.map((p) => [p.slug, 'content_html' in p, typeof p.content_text]), [['a', false, 'string'], ['b', false, 'string']], name)
      const plain = (await get(base, `${route}`)).json() as Array<Record<string, unknown>>
      assert.ok(plain.every((p) => !('content_html' in p) && !('content_text' in p)), name)
      // With fields, a Markdown column is rendered when it is served.
      const trimmed = (await get(base, `${route}?fields=title&formats=html`)).json() as Array<Record<string, unknown>>
      assert.deepEqual(Object.keys(trimmed[0]!), ['slug', 'title'], name)
    }
  })

  test('a malformed formats is a 400 invalid-query naming it, refused by the front before any upstream call', async () => {
    const before = rendered.length
    for (const search of ['formats=', 'formats=xml', 'formats=html,,text', 'formats=HTML', 'formats=html&formats=text']) {
      for (const path of [`/api/blog?${search}`, `/api/blog/a?${search}`]) {
        const problem = assertProblem(await get(front.url, path), 'invalid-query')
        assert.match(String(problem.detail), /\bformats\b/, path)
      }
      assertProblem(await get(posts.url, `/api/posts?${search}`), 'invalid-query')
    }
    assert.equal(rendered.length, before)
  })
})

describe('computed fields', () => {
  test('reading_time, word_count and excerpt come when named in fields, without the body they are computed from', async () => {
    for (const [name, base, route] of tiers()) {
      const list = (await get(base, `${route}?fields=title,excerpt,reading_time,word_count`)).json() as Array<Record<string, unknown>>
      assert.deepEqual(list, [
        { slug: 'a', title: 'A', excerpt: 'Hello world See docs and <script>alert(1)</script> [bad](javascript:alert(1)).', reading_time: 1, word_count: createMarkdownRenderer()(CONTENT_A).wordCount },
        { slug: 'b', title: 'B', excerpt: 'The summary of B', reading_time: 1, word_count: 6 }
      ], name)
      const one = (await get(base, `${detail(route)}/b?fields=word_count`)).json() as Record<string, unknown>
      assert.deepEqual(one, { slug: 'b', word_count: 6 }, name)
    }
  })

  test('without fields naming them, no computed field is served', async () => {
    const post = (await get(front.url, '/api/blog/a')).json() as Record<string, unknown>
    assert.ok(!('excerpt' in post) && !('reading_time' in post) && !('word_count' in post))
  })
})

describe('rendered once per content', () => {
  test('repeated requests render nothing again, and a commit to one post re-renders only that post', async () => {
    const paths = ['/api/blog?formats=html,text', '/api/blog/a?formats=html', '/api/blog?fields=excerpt,reading_time', '/api/blog?limit=1&formats=html']
    for (const path of paths) assert.equal((await get(front.url, path)).status, 200, path)
    const first = rendered.length
    for (const path of paths) assert.equal((await get(front.url, path)).status, 200, path)
    assert.equal(rendered.length, first, 'no render per request')
    await database.exec("UPDATE posts SET content = 'Changed B.' WHERE slug = 'b'")
    for (const path of paths) assert.equal((await get(front.url, path)).status, 200, path)
    assert.deepEqual(rendered.slice(first), ['Changed B.'], 'only the changed content is rendered')
    assert.deepEqual(new Set(rendered).size, rendered.length, 'no content rendered twice')
    const b = (await get(front.url, '/api/blog/b?formats=text')).json() as Record<string, unknown>
    assert.equal(b.content_text, 'Changed B.')
  })
})
