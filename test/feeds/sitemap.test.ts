// Sitemaps: one urlset while the posts fit in a page, otherwise an index of pages of at most
// `pageSize` URLs (50,000 in production, fewer here), each read back by a strict XML parser.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { SITEMAP_MAX_URLS, sitemapDocument, sitemapPageCount, type SitemapEntry, type SitemapOptions } from '../../src/feeds/sitemap.js'
import { childrenNamed, childText, NS, parseXml, type XmlElement } from './xml-tree.js'

const options: SitemapOptions = {
  postUrl: createPostUrl(parseSiteUrl('https://blog.example')),
  pageUrl: (page) => `https://blog.example/sitemap.xml?page=${page}`
}

const entries = (count: number): SitemapEntry[] => Array.from({ length: count }, (_, index) => ({
  slug: `post-${index}`,
  // Post 0 has no date, odd posts were updated, even ones only published.
  updatedAt: index % 2 === 1 ? new Date(Date.UTC(2024, 0, 1 + index)) : null,
  publishedAt: index === 0 ? null : new Date(Date.UTC(2023, 0, 1 + index))
}))

function read (chunks: Iterable<string> | undefined): XmlElement {
  assert.ok(chunks !== undefined, 'a document')
  return parseXml([...chunks].join(''))
}

const locs = (urlset: XmlElement): string[] => childrenNamed(urlset, NS.sitemap, 'url').map((url) => childText(url, NS.sitemap, 'loc'))

test('one page: a urlset of every post, each with its URL and its latest date', () => {
  const urlset = read(sitemapDocument(entries(3), options))
  assert.equal(urlset.uri, NS.sitemap)
  assert.equal(urlset.local, 'urlset')
  assert.deepEqual(locs(urlset), ['https://blog.example/blog/post-0', 'https://blog.example/blog/post-1', 'https://blog.example/blog/post-2'])
  const lastmods = childrenNamed(urlset, NS.sitemap, 'url').map((url) => childrenNamed(url, NS.sitemap, 'lastmod').map((lastmod) => lastmod.text))
  assert.deepEqual(lastmods, [[], ['2024-01-02T00:00:00.000Z'], ['2023-01-03T00:00:00.000Z']], 'updated, else published, else none')
})

test('no posts: an empty urlset, still a valid document', () => {
  assert.deepEqual(locs(read(sitemapDocument([], options))), [])
})

test('more posts than a page holds: an index of pages, then each page', () => {
  const all = entries(7)
  const split = { ...options, pageSize: 3 }
  const index = read(sitemapDocument(all, split))
  assert.equal(index.local, 'sitemapindex')
  assert.equal(index.uri, NS.sitemap)
  const sitemaps = childrenNamed(index, NS.sitemap, 'sitemap')
  assert.deepEqual(sitemaps.map((sitemap) => childText(sitemap, NS.sitemap, 'loc')),
    [1, 2, 3].map((page) => `https://blog.example/sitemap.xml?page=${page}`))
  assert.deepEqual(sitemaps.map((sitemap) => childText(sitemap, NS.sitemap, 'lastmod')),
    ['2024-01-02T00:00:00.000Z', '2024-01-06T00:00:00.000Z', '2023-01-07T00:00:00.000Z'], 'the latest date among each page\'s posts')

  const pages = [1, 2, 3].map((page) => locs(read(sitemapDocument(all, split, page))))
  assert.deepEqual(pages.map((page) => page.length), [3, 3, 1])
  assert.deepEqual(pages.flat(), all.map((entry) => `https://blog.example/blog/${entry.slug}`), 'every post once, in order')
})

test('the split falls exactly at the page size', () => {
  assert.equal(read(sitemapDocument(entries(3), { ...options, pageSize: 3 })).local, 'urlset')
  assert.equal(read(sitemapDocument(entries(4), { ...options, pageSize: 3 })).local, 'sitemapindex')
  assert.deepEqual([0, 1, 3, 4, 6, 7].map((total) => sitemapPageCount(total, 3)), [1, 1, 1, 2, 2, 3])
})

test('the production page size is the protocol\'s 50,000 URLs', () => {
  assert.equal(SITEMAP_MAX_URLS, 50_000)
  assert.equal(read(sitemapDocument(entries(50_000), options)).local, 'urlset')
  const index = read(sitemapDocument(entries(50_001), options))
  assert.equal(childrenNamed(index, NS.sitemap, 'sitemap').length, 2)
  assert.equal(locs(read(sitemapDocument(entries(50_001), options, 2))).length, 1)
})

test('a page that does not exist is undefined (the route answers 404); page 1 of a single page is the urlset', () => {
  const split = { ...options, pageSize: 3 }
  for (const page of [0, -1, 4, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.equal(sitemapDocument(entries(7), split, page), undefined, String(page))
  }
  assert.deepEqual(locs(read(sitemapDocument(entries(2), split, 1))).length, 2)
  assert.equal(sitemapDocument(entries(2), split, 2), undefined)
})

test('a page size below one is a programming error', () => {
  assert.throws(() => sitemapDocument([], { ...options, pageSize: 0 }), RangeError)
})

test('URLs are escaped: a template with a query keeps the sitemap well-formed', () => {
  const postUrl = createPostUrl(parseSiteUrl('https://blog.example/'), '{site}/read?post={slug}&lang=en')
  const urlset = read(sitemapDocument([{ slug: 'a' }, { slug: 'Legacy Slug&Co' }], { ...options, postUrl }))
  assert.deepEqual(locs(urlset), ['https://blog.example/read?post=a&lang=en', 'https://blog.example/read?post=Legacy%20Slug%26Co&lang=en'])
})

test('a large sitemap comes in chunks of at most 1,000 URLs, never as one string', () => {
  const chunks = [...sitemapDocument(entries(10_500), options)!]
  assert.equal(chunks.length, 1 + 11 + 1, 'the opening, 11 chunks of URLs, the closing')
  assert.ok(chunks.every((chunk) => chunk.split('<url>').length - 1 <= 1000))
  assert.equal(locs(parseXml(chunks.join(''))).length, 10_500)
})
