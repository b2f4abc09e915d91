// Rendered content, computed fields and feeds on one store, through both tiers over real HTTP:
// what the store gives back (Markdown with non-ASCII text, JSON or text[] tags, its own timestamp
// types) renders exactly as the renderer makes it from the source, the computed fields are those
// of that text, every feed is a well-formed document that a commit changes on the next
// request, and the sitemap (and its index of pages) lists every post. Run on SQLite, PostgreSQL and MySQL/MariaDB (see sqlite, postgres and mysql.test.ts).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { computeFields } from '../../src/render/computed-fields.js'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import type { PostStore } from '../../src/store/store.js'
import { child, childrenNamed, childText, NS, parseXml } from '../feeds/xml-tree.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { listen, silentLogger, startFront, type RunningApp } from '../helpers/tiers.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const SITE = 'https://blog.example/site'
const HOSTILE_TITLE = 'Less < more & ]]> done'

interface Sample { slug: string, title: string, summary: string | null, content: string, tags: string[], published: string }

/** Newest first, as lists and feeds order them. */
const POSTS: readonly Sample[] = [
  {
    slug: 'rendered',
    title: HOSTILE_TITLE,
    summary: null,
    content: '# Été *à* Zürich 😀\n\nSee [the docs](docs/intro) and ![a map](/img/map.png), <script>alert(1)</script> ' +
      '[bad](javascript:alert(1)).\n\n| a | b |\n|---|---|\n| ~~x~~ | https://example.com |\n',
    tags: ['rust', 'été'],
    published: '2024-05-03T10:00:00.000Z'
  },
  { slug: 'summarised', title: 'Summarised', summary: 'The summary, as written.', content: 'Second post, with a few words.', tags: ['sql'], published: '2024-05-02T10:00:00.000Z' },
  { slug: 'long', title: 'Long', summary: '  ', content: `${'word '.repeat(300)}end.`, tags: [], published: '2024-05-01T10:00:00.000Z' }
]

const render = createMarkdownRenderer()
const expected = (sample: Sample): ReturnType<typeof render> => render(sample.content)
const bySlug = (slug: string): Sample => POSTS.find((sample) => sample.slug === slug)!

export function describeRenderedReads (name: string, server: TestServer): void {
  describeOrSkip(`rendered content and feeds on ${name}`, { skip: server.skip }, () => {
    let database: TestDatabase
    let store: PostStore
    let posts: RunningApp
    let front: RunningApp

    before(async () => {
      database = await server.create()
      const writer = await openTestStore(database.location, { writable: true })
      try {
        await writer.migrate()
        await writer.upsertPosts(POSTS.map((sample) => ({
          values: { slug: sample.slug, title: sample.title, summary: sample.summary, content: sample.content, tags: sample.tags, published_at: new Date(sample.published) }
        })), { dryRun: false })
      } finally {
        await writer.close()
      }
      store = await openTestStore(database.location)
      await store.checkSchema()
      posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger })))
      const site = parseSiteUrl(SITE)
      front = await startFront(new URL(posts.url), { feeds: { site: { url: site, postUrl: createPostUrl(site) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 } })
    })
    after(async () => {
      await front?.app.close()
      await posts?.app.close()
      await store?.close()
      await database?.drop()
    })

    const tiers = (): Array<[string, string, string, string]> => [['front', front.url, '/api/blog', '/api/blog'], ['post API', posts.url, '/api/posts', '/api/post']]

    test('formats=html,text: each post\'s HTML and text are the renderer\'s, from the content as stored, on the list and the detail of both tiers', async () => {
      for (const [tier, base, list, detail] of tiers()) {
        const rows = (await get(base, `${list}?formats=html,text`)).json() as Array<Record<string, unknown>>
        assert.deepEqual(rows.map((row) => row.slug), POSTS.map((sample) => sample.slug), tier)
        for (const row of rows) {
          const sample = bySlug(String(row.slug))
          assert.equal(row.content, sample.content, tier)
          assert.equal(row.content_html, expected(sample).html, `${tier}: ${sample.slug}`)
          assert.equal(row.content_text, expected(sample).text, `${tier}: ${sample.slug}`)
        }
        const one = (await get(base, `${detail}/rendered?formats=html`)).json() as Record<string, unknown>
        assert.equal(one.content_html, expected(POSTS[0]!).html, tier)
        assert.ok(!('content_text' in one), tier)
        assert.match(String(one.content_html), /<h1 id="[^"]+">Été <em>à<\/em> Zürich 😀<\/h1>/, tier)
        assert.match(String(one.content_html), /&lt;script&gt;/, tier)
        assert.doesNotMatch(String(one.content_html), /<script|href="javascript:/, tier)
        assert.match(String(one.content_html), /<table>[\s\S]*<s>x<\/s>[\s\S]*<a href="https:\/\/example\.com">/, tier)
      }
    })

    test('computed fields: reading_time, word_count and excerpt of the stored content (the summary when not blank), content left out', async () => {
      for (const [tier, base, list, detail] of tiers()) {
        const rows = (await get(base, `${list}?fields=slug,reading_time,word_count,excerpt`)).json() as Array<Record<string, unknown>>
        const want = POSTS.map((sample) => {
          const { reading_time: readingTime, word_count: wordCount, excerpt } = computeFields(expected(sample).text, sample.summary)
          return { slug: sample.slug, reading_time: readingTime, word_count: wordCount, excerpt }
        })
        assert.deepEqual(rows.map((row) => ({ ...row })), want, tier)
        assert.equal(want[1]!.excerpt, 'The summary, as written.')
        assert.deepEqual([want[2]!.word_count, want[2]!.reading_time], [301, 2])
        assert.match(want[2]!.excerpt, /^word word .*…$/)
        const one = (await get(base, `${detail}/long?fields=excerpt,title`)).json() as Record<string, unknown>
        assert.deepEqual(one, { slug: 'long', title: 'Long', excerpt: want[2]!.excerpt }, tier)
      }
    })

    test('every feed is well-formed with the hostile title, its items summarised and their links resolved against SITE_URL', async () => {
      const rss = parseXml((await get(front.url, '/feed.xml')).text)
      const items = childrenNamed(child(rss, NS.none, 'channel'), NS.none, 'item')
      assert.deepEqual(items.map((item) => childText(item, NS.none, 'link')), POSTS.map((sample) => `https://blog.example/site/blog/${sample.slug}`))
      assert.equal(childText(items[0]!, NS.none, 'title'), HOSTILE_TITLE)
      assert.deepEqual(items.map((item) => childText(item, NS.none, 'description')),
        POSTS.map((sample) => computeFields(expected(sample).text, sample.summary).excerpt))
      const content = childText(items[0]!, NS.content, 'encoded')
      assert.match(content, /href="https:\/\/blog\.example\/site\/docs\/intro"/)
      assert.match(content, /src="https:\/\/blog\.example\/img\/map\.png"/)
      const atom = parseXml((await get(front.url, '/feed.atom')).text)
      assert.equal(childText(childrenNamed(atom, NS.atom, 'entry')[0]!, NS.atom, 'title'), HOSTILE_TITLE)
      const json = (await get(front.url, '/feed.json')).json() as { version: string, items: Array<{ title: string, tags?: string[] }> }
      assert.equal(json.version, 'https://jsonfeed.org/version/1.1')
      assert.deepEqual(json.items.map((item) => [item.title, item.tags ?? []]), POSTS.map((sample) => [sample.title, sample.tags]))
    })

    test('the sitemap lists every post under SITE_URL with its lastmod; past its page size, an index of pages holding them all', async () => {
      const urls = POSTS.map((sample) => `https://blog.example/site/blog/${sample.slug}`)
      const response = await get(front.url, '/sitemap.xml')
      assert.equal(response.status, 200)
      assert.match(String(response.headers['content-type']), /^application\/xml/)
      const urlset = parseXml(response.text)
      assert.equal(urlset.uri, NS.sitemap)
      assert.equal(urlset.local, 'urlset')
      const entries = childrenNamed(urlset, NS.sitemap, 'url')
      assert.deepEqual(entries.map((url) => childText(url, NS.sitemap, 'loc')), urls)
      assert.deepEqual(entries.map((url) => childText(url, NS.sitemap, 'lastmod')), POSTS.map((sample) => sample.published))
      const site = parseSiteUrl(SITE)
      const paged = await startFront(new URL(posts.url), { feeds: { site: { url: site, postUrl: createPostUrl(site) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 }, sitemapPageSize: 2 })
      try {
        const index = parseXml((await get(paged.url, '/sitemap.xml')).text)
        assert.equal(index.local, 'sitemapindex')
        const pages = childrenNamed(index, NS.sitemap, 'sitemap').map((entry) => childText(entry, NS.sitemap, 'loc'))
        assert.deepEqual(pages, ['https://blog.example/sitemap-1.xml', 'https://blog.example/sitemap-2.xml'])
        const listed: string[] = []
        for (const page of [1, 2]) {
          listed.push(...childrenNamed(parseXml((await get(paged.url, `/sitemap-${page}.xml`)).text), NS.sitemap, 'url').map((url) => childText(url, NS.sitemap, 'loc')))
        }
        assert.deepEqual(listed, urls)
        assert.equal((await get(paged.url, '/sitemap-3.xml')).status, 404)
      } finally {
        await paged.app.close()
      }
    })

    test('a commit changes each feed\'s content and ETag on the next request', async () => {
      const paths = ['/feed.xml', '/feed.atom', '/feed.json']
      const before = await Promise.all(paths.map(async (path) => await get(front.url, path)))
      await database.exec("UPDATE posts SET title = 'Summarised, retitled' WHERE slug = 'summarised'")
      for (const [index, path] of paths.entries()) {
        const next = await get(front.url, path, { 'if-none-match': String(before[index]!.headers.etag) })
        assert.equal(next.status, 200, path)
        assert.notEqual(next.headers.etag, before[index]!.headers.etag, path)
        assert.match(next.text, /Summarised, retitled/, path)
      }
    })
  })
}
