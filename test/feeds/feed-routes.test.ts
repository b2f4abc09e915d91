// The front's feeds and sitemap over both tiers, real HTTP and a real SQLite file: each document
// parses with a strict XML parser (or as JSON Feed) and holds what its format requires; a
// commit changes the document and its strong ETag on the very next request; each item's summary
// is the summary column or else the computed excerpt; 304 and compression
// work as on the other routes; a title with `<`, `&` and `]]>` keeps every feed well-formed;
// `tag=` narrows a feed; each feed links to itself at the site's root; a sitemap beyond its page
// size becomes an index of pages; without
// SITE_URL every one of these routes is a 404 naming the setting.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { KEYED_LIST_PATH } from '../../src/contract/keyed-list.js'
import { INDEX_AFTER_CALLS } from '../../src/front/cache/page-indexes.js'
import { FEED_PATHS } from '../../src/front/feed-documents.js'
import { MIN_COMPRESSED_BYTES } from '../../src/http/representation.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { testConfig } from '../helpers/config.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { listen, silentLogger, startFront, type RunningApp } from '../helpers/tiers.js'
import { child, childrenNamed, childText, NS, parseXml } from './xml-tree.js'

const SITE = 'https://blog.example/'
const HOSTILE_TITLE = 'Less < more & ]]> done'

let database: TestDatabase
let store: PostStore
let posts: RunningApp
let front: RunningApp
let bare: RunningApp
/** Every path the post API was asked for. */
const upstreamPaths: string[] = []

before(async () => {
  database = await sqliteServer.create()
  const writer = await openTestStore(database.location, { writable: true })
  await writer.migrate()
  await writer.close()
  await database.exec(`INSERT INTO posts (id, slug, title, summary, content, author, tags, published_at) VALUES
    (1, 'one', '${HOSTILE_TITLE}', NULL, 'See [the next post](/blog/two) and ![a cat](cat.png).', 'Ada', '["rust"]', '2024-05-03T00:00:00Z'),
    (2, 'two', 'Two', 'Summary two', '# Two\n\nText.', NULL, '["sql"]', '2024-05-02T00:00:00Z'),
    (3, 'three', 'Three', NULL, 'Third.', 'Bob', '[]', '2024-05-01T00:00:00Z')`)
  store = await openTestStore(database.location)
  await store.checkSchema()
  const postsApp = buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger }))
  postsApp.addHook('onRequest', async (request) => { upstreamPaths.push(request.url) })
  posts = await listen(postsApp)
  const site = parseSiteUrl(SITE)
  front = await startFront(new URL(posts.url), { feeds: { site: { url: site, postUrl: createPostUrl(site) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 }, sitemapPageSize: 2 })
  bare = await startFront(new URL(posts.url))
})
after(async () => {
  await bare.app.close()
  await front.app.close()
  await posts.app.close()
  await store.close()
  await database.drop()
})

describe('feeds', () => {
  test('RSS 2.0 with content:encoded, each item linked by POST_URL_TEMPLATE, relative links made absolute, the hostile title kept', async () => {
    const response = await get(front.url, '/feed.xml')
    assert.equal(response.status, 200)
    assert.match(String(response.headers['content-type']), /^application\/rss\+xml/)
    assert.match(String(response.headers.etag), /^"[^W]/)
    const rss = parseXml(response.text)
    assert.equal(rss.local, 'rss')
    assert.equal(rss.attributes.version, '2.0')
    const channel = child(rss, NS.none, 'channel')
    for (const name of ['title', 'link', 'description']) assert.ok(childText(channel, NS.none, name) !== '' || name === 'description', name)
    const items = childrenNamed(channel, NS.none, 'item')
    assert.deepEqual(items.map((item) => childText(item, NS.none, 'link')), ['https://blog.example/blog/one', 'https://blog.example/blog/two', 'https://blog.example/blog/three'])
    assert.equal(childText(items[0]!, NS.none, 'title'), HOSTILE_TITLE)
    const content = childText(items[0]!, NS.content, 'encoded')
    assert.match(content, /href="https:\/\/blog\.example\/blog\/two"/)
    assert.match(content, /src="https:\/\/blog\.example\/cat\.png"/)
  })

  test('each item\'s summary is the summary column, else the excerpt of its text, in every format', async () => {
    const expected = ['See the next post and a cat.', 'Summary two', 'Third.']
    const rss = childrenNamed(child(parseXml((await get(front.url, '/feed.xml')).text), NS.none, 'channel'), NS.none, 'item')
    assert.deepEqual(rss.map((item) => childText(item, NS.none, 'description')), expected)
    const atom = childrenNamed(parseXml((await get(front.url, '/feed.atom')).text), NS.atom, 'entry')
    assert.deepEqual(atom.map((entry) => childText(entry, NS.atom, 'summary')), expected)
    const json = (await get(front.url, '/feed.json')).json() as { items: Array<{ summary?: string }> }
    assert.deepEqual(json.items.map((item) => item.summary), expected)
  })

  test('Atom 1.0 and JSON Feed 1.1 hold their required members', async () => {
    const atomResponse = await get(front.url, '/feed.atom')
    assert.match(String(atomResponse.headers['content-type']), /^application\/atom\+xml/)
    const atom = parseXml(atomResponse.text)
    assert.equal(atom.uri, NS.atom)
    for (const name of ['id', 'title', 'updated']) assert.ok(childText(atom, NS.atom, name) !== '', name)
    const entries = childrenNamed(atom, NS.atom, 'entry')
    assert.equal(entries.length, 3)
    for (const entry of entries) for (const name of ['id', 'title', 'updated']) assert.ok(childText(entry, NS.atom, name) !== '', name)
    assert.equal(childText(entries[0]!, NS.atom, 'title'), HOSTILE_TITLE)
    const jsonResponse = await get(front.url, '/feed.json')
    assert.match(String(jsonResponse.headers['content-type']), /^application\/feed\+json/)
    const feed = jsonResponse.json() as { version: string, title: string, items: Array<{ id: string, url: string, title: string, content_html?: string }> }
    assert.equal(feed.version, 'https://jsonfeed.org/version/1.1')
    assert.deepEqual(feed.items.map((item) => [item.url, item.title]), [['https://blog.example/blog/one', HOSTILE_TITLE], ['https://blog.example/blog/two', 'Two'], ['https://blog.example/blog/three', 'Three']])
    assert.match(String(feed.items[1]!.content_html), /<h1 id="two">Two<\/h1>/)
  })

  test('tag= narrows every feed; a malformed tag is a 400 invalid-query', async () => {
    const rss = parseXml((await get(front.url, '/feed.xml?tag=sql')).text)
    assert.deepEqual(childrenNamed(child(rss, NS.none, 'channel'), NS.none, 'item').map((item) => childText(item, NS.none, 'link')), ['https://blog.example/blog/two'])
    const json = (await get(front.url, '/feed.json?tag=rust')).json() as { items: Array<{ url: string }> }
    assert.deepEqual(json.items.map((item) => item.url), ['https://blog.example/blog/one'])
    const none = parseXml((await get(front.url, '/feed.atom?tag=nothing-tagged')).text)
    assert.deepEqual(childrenNamed(none, NS.atom, 'entry'), [])
    assertProblem(await get(front.url, `/feed.xml?tag=${'x'.repeat(101)}`), 'invalid-query')
  })

  test('each feed links to itself (RSS atom:link, Atom link and id, JSON Feed feed_url) at the site\'s root, with its tag', async () => {
    for (const [search, tagged] of [['', ''], ['?tag=C%2B%2B', '?tag=C%2B%2B']] as const) {
      const selfOf = (path: string): string => `https://blog.example${path}${tagged}`
      const channel = child(parseXml((await get(front.url, `/feed.xml${search}`)).text), NS.none, 'channel')
      const rssSelf = childrenNamed(channel, NS.atom, 'link').filter((link) => link.attributes.rel === 'self')
      assert.deepEqual(rssSelf.map((link) => [link.attributes.href, link.attributes.type]), [[selfOf('/feed.xml'), 'application/rss+xml']])
      const atom = parseXml((await get(front.url, `/feed.atom${search}`)).text)
      const atomSelf = childrenNamed(atom, NS.atom, 'link').filter((link) => link.attributes.rel === 'self')
      assert.deepEqual(atomSelf.map((link) => link.attributes.href), [selfOf('/feed.atom')])
      assert.equal(childText(atom, NS.atom, 'id'), selfOf('/feed.atom'), 'each feed its own id')
      assert.equal(((await get(front.url, `/feed.json${search}`)).json() as { feed_url?: string }).feed_url, selfOf('/feed.json'))
    }
  })

  test('strong ETags with 304, compression, and a commit changes the document and its ETag on the next request', async () => {
    for (const path of ['/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml']) {
      const first = await get(front.url, path)
      const etag = String(first.headers.etag)
      assert.equal((await get(front.url, path, { 'if-none-match': etag })).status, 304, path)
      // fetch decodes the body itself.
      const gzip = await fetch(front.url + path, { headers: { 'accept-encoding': 'gzip' } })
      if (Buffer.byteLength(first.text) >= MIN_COMPRESSED_BYTES) assert.equal(gzip.headers.get('content-encoding'), 'gzip', path)
      assert.equal(await gzip.text(), first.text, path)
    }
    const before = await get(front.url, '/feed.xml')
    await database.exec("UPDATE posts SET title = 'Two, retitled' WHERE slug = 'two'")
    const afterCommit = await get(front.url, '/feed.xml', { 'if-none-match': String(before.headers.etag) })
    assert.equal(afterCommit.status, 200)
    assert.notEqual(afterCommit.headers.etag, before.headers.etag)
    assert.match(afterCommit.text, /Two, retitled/)
    await database.exec("UPDATE posts SET title = 'Two' WHERE slug = 'two'")
  })

  test('past the page-index threshold, a feed never makes the front fetch a keyed list of rendered posts', async () => {
    upstreamPaths.length = 0
    for (let i = 0; i < INDEX_AFTER_CALLS + 10; i++) assert.equal((await get(front.url, FEED_PATHS[i % FEED_PATHS.length]!)).status, 200)
    assert.deepEqual(upstreamPaths.filter((path) => path.startsWith(KEYED_LIST_PATH)), [])
  })
})

describe('sitemap', () => {
  test('beyond its page size, an index of pages at the site root; each page a urlset with lastmod', async () => {
    const index = parseXml((await get(front.url, '/sitemap.xml')).text)
    assert.equal(index.uri, NS.sitemap)
    assert.equal(index.local, 'sitemapindex')
    const locs = childrenNamed(index, NS.sitemap, 'sitemap').map((entry) => childText(entry, NS.sitemap, 'loc'))
    assert.deepEqual(locs, ['https://blog.example/sitemap-1.xml', 'https://blog.example/sitemap-2.xml'])
    const urls: string[] = []
    for (const page of [1, 2]) {
      const response = await get(front.url, `/sitemap-${page}.xml`)
      assert.match(String(response.headers['content-type']), /^application\/xml/)
      const urlset = parseXml(response.text)
      assert.equal(urlset.local, 'urlset')
      for (const url of childrenNamed(urlset, NS.sitemap, 'url')) {
        urls.push(childText(url, NS.sitemap, 'loc'))
        assert.match(childText(url, NS.sitemap, 'lastmod'), /^2024-05-0\dT00:00:00\.000Z$/)
      }
    }
    assert.deepEqual(urls, ['https://blog.example/blog/one', 'https://blog.example/blog/two', 'https://blog.example/blog/three'])
    for (const path of ['/sitemap-3.xml', '/sitemap-0.xml', '/sitemap-x.xml', '/sitemap-1.json']) assertProblem(await get(front.url, path), 'not-found')
  })
})

test('without SITE_URL, every feed and the sitemap is a 404 naming the setting', async () => {
  for (const path of ['/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml', '/sitemap-1.xml']) {
    const problem = assertProblem(await get(bare.url, path), 'not-found')
    assert.match(String(problem.detail), /SITE_URL/, path)
  }
})
