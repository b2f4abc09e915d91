// The parts the feed writers share: XML escaping, post URLs from the site and the template,
// relative links made absolute, and posts read from the post API's rows.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { linkBaseOf, resolveRelativeLinks } from '../../src/feeds/absolute-links.js'
import { feedPostFromRow, parseTimestamp } from '../../src/feeds/feed-post.js'
import { createPostUrl, DEFAULT_POST_URL_TEMPLATE, parseSiteUrl } from '../../src/feeds/post-url.js'
import { escapeXml } from '../../src/feeds/xml.js'
import { excerpt } from '../../src/render/computed-fields.js'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { parseXml } from './xml-tree.js'

test('escapeXml: the five special characters become entities, forbidden characters go, others stay', () => {
  assert.equal(escapeXml('<a href="x">Tom & Jerry\'s ]]></a>'), '&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s ]]&gt;&lt;/a&gt;')
  assert.equal(escapeXml('a\u0000b\u0008c\u000bd\u000ce\u001ff\ufffeg\uffffh'), 'abcdefgh')
  assert.equal(escapeXml('tab\tnewline\ncr\r'), 'tab\tnewline\ncr\r')
  assert.equal(escapeXml('lone \ud800 high, lone \udc00 low, pair 😀'), 'lone  high, lone  low, pair 😀')
  assert.equal(escapeXml('é 日本 \u00a0 \ufffd'), 'é 日本 \u00a0 \ufffd')
})

const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g // eslint-disable-line no-control-regex

test('property: any string escaped is well-formed text and attribute content, and reads back without its forbidden characters', () => {
  const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 60 }).map((codes) => String.fromCharCode(...codes))
  fc.assert(fc.property(anyText, (text) => {
    const element = parseXml(`<a b="${escapeXml(text)}" c='${escapeXml(text)}'>${escapeXml(text)}</a>`)
    // A parser reports line breaks as newlines, and in attributes every tab and newline as a space.
    const kept = text.replace(FORBIDDEN, '').replace(/\r\n?/g, '\n')
    assert.equal(element.text, kept)
    assert.equal(element.attributes.b, kept.replace(/[\t\n]/g, ' '))
    assert.equal(element.attributes.c, kept.replace(/[\t\n]/g, ' '))
  }), { numRuns: 2000 })
})

test('the site URL must be absolute http or https, without query, fragment or credentials', () => {
  assert.equal(parseSiteUrl('https://blog.example').href, 'https://blog.example/')
  assert.equal(parseSiteUrl('http://localhost:8080/blog/').href, 'http://localhost:8080/blog/')
  for (const bad of ['blog.example', '/blog', 'ftp://blog.example', 'javascript:alert(1)', 'https://blog.example/?a=1', 'https://blog.example/#x', 'https://u:p@blog.example/']) {
    assert.throws(() => parseSiteUrl(bad), /"/, bad)
  }
})

test('post URLs: {site} without its trailing slash, {slug} percent-encoded', () => {
  assert.equal(DEFAULT_POST_URL_TEMPLATE, '{site}/blog/{slug}')
  assert.equal(createPostUrl(parseSiteUrl('https://blog.example/'))('hello-world'), 'https://blog.example/blog/hello-world')
  assert.equal(createPostUrl(parseSiteUrl('https://example.com/me/'))('a'), 'https://example.com/me/blog/a')
  assert.equal(createPostUrl(parseSiteUrl('https://blog.example'), '{site}/{slug}/')('a'), 'https://blog.example/a/')
  assert.equal(createPostUrl(parseSiteUrl('https://blog.example'), 'https://cdn.example/p/{slug}.html')('a'), 'https://cdn.example/p/a.html')
  assert.equal(createPostUrl(parseSiteUrl('https://blog.example'))('Mixed Case/é'), 'https://blog.example/blog/Mixed%20Case%2F%C3%A9')
})

test('a template without {slug}, with another placeholder, or making no absolute http URL is refused with its reason', () => {
  const site = parseSiteUrl('https://blog.example')
  assert.throws(() => createPostUrl(site, '{site}/blog'), /has no \{slug\}/)
  assert.throws(() => createPostUrl(site, '{site}/{year}/{slug}'), /names \{year\}/)
  assert.throws(() => createPostUrl(site, '/blog/{slug}'), /does not make an absolute http or https URL/)
  assert.throws(() => createPostUrl(site, 'javascript:{slug}'), /does not make an absolute http or https URL/)
})

test('relative links and images are resolved against the site\'s URL as a folder, a fragment alone against the post\'s; absolute ones are kept as written', () => {
  const html = createMarkdownRenderer()('[a](/about) [b](other) [c](#part) [d](?q=1&r=2) [e](//cdn.example/x) [f](HTTPS://Other.Example/A) ' +
    '[g](mailto:a@b.co) ![h](img/h.png "title") [i](../up)').html
  // A site at a host's root, and one under a path, given with or without its trailing slash.
  const post = 'https://blog.example/blog/a-post'
  assert.equal(resolveRelativeLinks(html, linkBaseOf('https://blog.example/'), post), '<p><a href="https://blog.example/about">a</a> <a href="https://blog.example/other">b</a> ' +
    '<a href="https://blog.example/blog/a-post#part">c</a> <a href="https://blog.example/?q=1&amp;r=2">d</a> ' +
    '<a href="https://cdn.example/x">e</a> <a href="HTTPS://Other.Example/A">f</a> <a href="mailto:a@b.co">g</a> ' +
    '<img src="https://blog.example/img/h.png" alt="h" title="title"> <a href="https://blog.example/up">i</a></p>\n')
  const underPath = '<p><a href="https://example.com/about">a</a> <a href="https://example.com/site/other">b</a> ' +
    '<a href="https://example.com/site/blog/a-post#part">c</a> <a href="https://example.com/site/?q=1&amp;r=2">d</a> ' +
    '<a href="https://cdn.example/x">e</a> <a href="HTTPS://Other.Example/A">f</a> <a href="mailto:a@b.co">g</a> ' +
    '<img src="https://example.com/site/img/h.png" alt="h" title="title"> <a href="https://example.com/up">i</a></p>\n'
  const postUnderPath = 'https://example.com/site/blog/a-post'
  assert.equal(resolveRelativeLinks(html, linkBaseOf('https://example.com/site'), postUnderPath), underPath)
  assert.equal(resolveRelativeLinks(html, linkBaseOf('https://example.com/site/'), postUnderPath), underPath)
})

test('text that looks like a link attribute is not a link: it is escaped in rendered HTML', () => {
  const html = createMarkdownRenderer()('A literal <a href="/x"> and href="/y" in text, and `<img src="/z">`.').html
  assert.equal(resolveRelativeLinks(html, 'https://blog.example/', 'https://blog.example/blog/a'), html)
})

test('posts from the post API\'s rows: each property of the right type, or absent', () => {
  assert.deepEqual(feedPostFromRow({
    slug: 'a',
    title: 'A',
    summary: 'stored summary',
    excerpt: 'the excerpt',
    content: '# raw',
    content_html: '<h1>raw</h1>',
    content_text: 'raw',
    author: 'Ada',
    tags: ['x', 3, 'y'],
    published_at: '2024-05-01 10:00:00',
    updated_at: '2024-05-02T00:00:00Z'
  }), {
    slug: 'a',
    title: 'A',
    summary: 'stored summary',
    html: '<h1>raw</h1>',
    text: 'raw',
    author: 'Ada',
    tags: ['x', 'y'],
    publishedAt: new Date('2024-05-01T10:00:00Z'),
    updatedAt: new Date('2024-05-02T00:00:00Z')
  })
  assert.deepEqual(feedPostFromRow({ slug: 'b', title: 7, summary: 'only summary', body_html: '<p>b</p>', author: { name: 'x' }, tags: 'x,y', published_at: 'soon' }, 'body'), {
    slug: 'b', title: null, summary: 'only summary', html: '<p>b</p>', text: null, author: null, tags: null, publishedAt: null, updatedAt: null
  })
})

test('a feed item\'s summary is the summary column when not blank, else the excerpt of its text; a table\'s excerpt column is not it', () => {
  const longText = `${'word '.repeat(60)}end`
  const summaryOf = (row: Record<string, unknown>): string | null | undefined => feedPostFromRow({ slug: 'a', ...row }, 'content', excerpt).summary
  assert.equal(summaryOf({ summary: 'Stored.', content_text: longText, excerpt: 'column' }), 'Stored.')
  for (const summary of [null, '', '  \n', 42]) assert.equal(summaryOf({ summary, content_text: longText }), excerpt(longText), String(summary))
  assert.equal(summaryOf({ content_text: 'Short text.' }), 'Short text.')
  assert.match(summaryOf({ content_text: longText })!, /^word word .*…$/)
  // Without a text (no Markdown column), the summary column alone.
  assert.equal(summaryOf({ summary: 'Stored.' }), 'Stored.')
  assert.equal(summaryOf({}), null)
  assert.equal(feedPostFromRow({ slug: 'a', content_text: longText }).summary, null)
})

test('timestamps: ISO 8601 and SQLite text, zone-less ones in UTC, impossible ones refused', () => {
  const cases: Array<[unknown, string | undefined]> = [
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-05-01 10:00:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00.123456+02:00', '2024-05-01T08:00:00.123Z'],
    ['2024-05-01T10:00+0530', '2024-05-01T04:30:00.000Z'],
    ['2024-02-29T23:59:59Z', '2024-02-29T23:59:59.000Z'],
    [new Date('2024-01-01T00:00:00Z'), '2024-01-01T00:00:00.000Z'],
    ['2023-02-29', undefined],
    ['2024-04-31', undefined],
    ['2024-13-01', undefined],
    ['2024-05-01T24:00:00Z', undefined],
    ['2024-05-01T10:60Z', undefined],
    ['yesterday', undefined],
    [1714557600, undefined],
    [null, undefined],
    [new Date(Number.NaN), undefined]
  ]
  for (const [value, expected] of cases) assert.equal(parseTimestamp(value)?.toISOString(), expected, String(value))
})
