// RSS 2.0, Atom 1.0 and JSON Feed 1.1 from the same posts: each document read back by a strict
// parser (XML) or checked against the JSON Feed 1.1 schema, with the elements each format requires.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import { writeAtom } from '../../src/feeds/atom.js'
import { JSON_FEED_VERSION, writeJsonFeed } from '../../src/feeds/json-feed.js'
import { writeRss } from '../../src/feeds/rss.js'
import { BARE, feedOf, FULL, FULL_HTML_ABSOLUTE, HOSTILE, HOSTILE_TEXT_KEPT, SITE } from './feed-fixtures.js'
import { child, childrenNamed, childText, NS, parseXml } from './xml-tree.js'

const schema = JSON.parse(readFileSync(new URL('./json-feed-1.1.schema.json', import.meta.url), 'utf8'))
const validateJsonFeed = new Ajv2020({ allErrors: true }).compile(schema)

function checkJsonFeed (document: string): any {
  const feed = JSON.parse(document)
  assert.ok(validateJsonFeed(feed), JSON.stringify(validateJsonFeed.errors))
  return feed
}

const SELF = 'https://blog.example/feed.xml'
const posts = [FULL, HOSTILE, BARE]

test('RSS 2.0: the channel and each item, with the full content in content:encoded', () => {
  const rss = parseXml(writeRss(feedOf(posts, { selfUrl: SELF })))
  assert.equal(rss.local, 'rss')
  assert.equal(rss.attributes.version, '2.0')
  const channel = child(rss, NS.none, 'channel')
  assert.equal(childText(channel, NS.none, 'title'), 'Example blog')
  assert.equal(childText(channel, NS.none, 'link'), 'https://blog.example/')
  assert.equal(childText(channel, NS.none, 'description'), 'Posts about examples')
  assert.equal(childText(channel, NS.none, 'language'), 'en')
  assert.equal(childText(channel, NS.none, 'lastBuildDate'), 'Fri, 03 May 2024 08:30:00 GMT', 'the latest date of any post')
  assert.deepEqual(child(channel, NS.atom, 'link').attributes, { href: SELF, rel: 'self', type: 'application/rss+xml' })

  const [full, hostile, bare] = childrenNamed(channel, NS.none, 'item')
  assert.equal(childrenNamed(channel, NS.none, 'item').length, 3)
  assert.equal(childText(full!, NS.none, 'title'), 'Hello, world')
  assert.equal(childText(full!, NS.none, 'link'), 'https://blog.example/blog/hello-world')
  assert.equal(childText(full!, NS.none, 'guid'), 'https://blog.example/blog/hello-world')
  assert.equal(child(full!, NS.none, 'guid').attributes.isPermaLink, 'true')
  assert.equal(childText(full!, NS.none, 'pubDate'), 'Wed, 01 May 2024 10:00:00 GMT')
  assert.equal(childText(full!, NS.dc, 'creator'), 'Ada Lovelace')
  assert.deepEqual(childrenNamed(full!, NS.none, 'category').map((category) => category.text), ['intro', 'C++'])
  assert.equal(childText(full!, NS.none, 'description'), 'The first post.')
  assert.equal(childText(full!, NS.content, 'encoded'), FULL_HTML_ABSOLUTE)

  assert.equal(childText(hostile!, NS.none, 'title'), HOSTILE_TEXT_KEPT)
  assert.deepEqual(childrenNamed(hostile!, NS.none, 'category').map((category) => category.text), ['a<b', 'x&y', ']]>'])
  assert.ok(childText(hostile!, NS.content, 'encoded').includes('<pre><code>]]&gt;</code></pre>'))

  assert.equal(childText(bare!, NS.none, 'title'), 'bare', 'a post without a title is titled by its slug')
  assert.deepEqual(childrenNamed(bare!, NS.none, 'pubDate'), [])
  assert.deepEqual(childrenNamed(bare!, NS.content, 'encoded'), [])
})

test('Atom 1.0: the feed and each entry, with the ids, dates and authors Atom requires', () => {
  const feed = parseXml(writeAtom(feedOf(posts, { selfUrl: SELF, author: 'The team' })))
  assert.equal(feed.uri, NS.atom)
  assert.equal(feed.local, 'feed')
  assert.equal(feed.attributes.lang, 'en')
  assert.equal(childText(feed, NS.atom, 'id'), SELF)
  assert.equal(childText(feed, NS.atom, 'title'), 'Example blog')
  assert.equal(childText(feed, NS.atom, 'subtitle'), 'Posts about examples')
  assert.equal(childText(feed, NS.atom, 'updated'), '2024-05-03T08:30:00.000Z')
  const links = childrenNamed(feed, NS.atom, 'link').map((link) => link.attributes)
  assert.deepEqual(links, [{ rel: 'alternate', type: 'text/html', href: SITE }, { rel: 'self', type: 'application/atom+xml', href: SELF }])

  const [full, hostile, bare] = childrenNamed(feed, NS.atom, 'entry')
  assert.equal(childText(full!, NS.atom, 'id'), 'https://blog.example/blog/hello-world')
  assert.equal(childText(full!, NS.atom, 'title'), 'Hello, world')
  assert.equal(childText(full!, NS.atom, 'updated'), '2024-05-03T08:30:00.000Z')
  assert.equal(childText(full!, NS.atom, 'published'), '2024-05-01T10:00:00.000Z')
  assert.equal(child(full!, NS.atom, 'link').attributes.href, 'https://blog.example/blog/hello-world')
  assert.equal(childText(child(full!, NS.atom, 'author'), NS.atom, 'name'), 'Ada Lovelace')
  assert.deepEqual(childrenNamed(full!, NS.atom, 'category').map((category) => category.attributes.term), ['intro', 'C++'])
  assert.equal(childText(full!, NS.atom, 'summary'), 'The first post.')
  assert.equal(child(full!, NS.atom, 'content').attributes.type, 'html')
  assert.equal(childText(full!, NS.atom, 'content'), FULL_HTML_ABSOLUTE)

  assert.equal(childText(hostile!, NS.atom, 'title'), HOSTILE_TEXT_KEPT)
  assert.equal(childText(hostile!, NS.atom, 'updated'), '2024-04-01T00:00:00.000Z', 'no updatedAt: the publication date')
  assert.equal(childText(child(hostile!, NS.atom, 'author'), NS.atom, 'name'), 'Tom & Jerry <tj@example.com>')

  assert.equal(childText(bare!, NS.atom, 'updated'), '2024-05-03T08:30:00.000Z', 'no date at all: the feed\'s')
  assert.equal(childText(child(bare!, NS.atom, 'author'), NS.atom, 'name'), 'The team', 'no author: the feed\'s')
})

test('Atom: without a feed author, an entry without one is the feed title\'s', () => {
  const feed = parseXml(writeAtom(feedOf([BARE])))
  assert.equal(childText(child(child(feed, NS.atom, 'entry'), NS.atom, 'author'), NS.atom, 'name'), 'Example blog')
  assert.equal(childText(feed, NS.atom, 'id'), SITE, 'without a self URL, the home page is the feed id')
})

test('JSON Feed 1.1: the schema of the specification, content_html or content_text on every item', () => {
  const feed = checkJsonFeed(writeJsonFeed(feedOf(posts, { selfUrl: 'https://blog.example/feed.json', author: 'The team' })))
  assert.equal(feed.version, JSON_FEED_VERSION)
  assert.equal(feed.version, 'https://jsonfeed.org/version/1.1')
  assert.equal(feed.feed_url, 'https://blog.example/feed.json')
  assert.equal(feed.home_page_url, SITE)
  assert.deepEqual(feed.authors, [{ name: 'The team' }])
  const [full, hostile, bare] = feed.items
  assert.deepEqual(full, {
    id: 'https://blog.example/blog/hello-world',
    url: 'https://blog.example/blog/hello-world',
    title: 'Hello, world',
    content_html: FULL_HTML_ABSOLUTE,
    summary: 'The first post.',
    date_published: '2024-05-01T10:00:00.000Z',
    date_modified: '2024-05-03T08:30:00.000Z',
    authors: [{ name: 'Ada Lovelace' }],
    tags: ['intro', 'C++']
  })
  assert.equal(hostile.title, HOSTILE.title, 'JSON carries any string as it is')
  assert.deepEqual(bare, { id: 'https://blog.example/blog/bare', url: 'https://blog.example/blog/bare', title: 'bare', content_text: 'Only some text.', authors: [{ name: 'The team' }] })
})

test('JSON Feed: a post with neither HTML nor text still has content_text', () => {
  const feed = checkJsonFeed(writeJsonFeed(feedOf([{ slug: 'empty' }, { slug: 'summary-only', summary: 'Just this.' }])))
  assert.equal(feed.items[0].content_text, '')
  assert.equal(feed.items[1].content_text, 'Just this.')
})

test('an empty feed is a valid document of each format, dated at the epoch rather than now', () => {
  const empty = feedOf([], { description: undefined, language: undefined })
  const rss = child(parseXml(writeRss(empty)), NS.none, 'channel')
  assert.equal(childText(rss, NS.none, 'description'), 'Example blog', 'RSS requires a description: the title stands in')
  assert.deepEqual(childrenNamed(rss, NS.none, 'item'), [])
  assert.equal(childText(parseXml(writeAtom(empty)), NS.atom, 'updated'), '1970-01-01T00:00:00.000Z')
  assert.deepEqual(checkJsonFeed(writeJsonFeed(empty)).items, [])
})

test('the same posts make the same bytes, whatever the clock says', (t) => {
  const feed = feedOf(posts, { selfUrl: SELF })
  const before = [writeRss(feed), writeAtom(feed), writeJsonFeed(feed)]
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2031-01-01T00:00:00Z') })
  assert.deepEqual([writeRss(feed), writeAtom(feed), writeJsonFeed(feed)], before)
})

// Any UTF-16 string, lone surrogates and controls included.
const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((codes) => String.fromCharCode(...codes))
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g // eslint-disable-line no-control-regex
// XML parsers report every line break in text as a newline.
const asXmlReadsIt = (text: string): string => text.replace(FORBIDDEN, '').replace(/\r\n?/g, '\n')

test('property: any title, summary, content, author and tags keep every feed well-formed and read back as written', () => {
  fc.assert(fc.property(anyText, anyText, anyText, anyText, fc.array(anyText, { maxLength: 3 }), (title, summary, html, author, tags) => {
    const feed = feedOf([{ slug: 'p', title, summary, html, author, tags }])
    const rssItem = child(child(parseXml(writeRss(feed)), NS.none, 'channel'), NS.none, 'item')
    const atomEntry = child(parseXml(writeAtom(feed)), NS.atom, 'entry')
    checkJsonFeed(writeJsonFeed(feed))
    if (title.trim() !== '' && asXmlReadsIt(title) !== '') {
      assert.equal(childText(rssItem, NS.none, 'title'), asXmlReadsIt(title))
      assert.equal(childText(atomEntry, NS.atom, 'title'), asXmlReadsIt(title))
    }
  }), { numRuns: 500 })
})
