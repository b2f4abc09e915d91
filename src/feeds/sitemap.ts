// Sitemaps (https://www.sitemaps.org/protocol.html): one `urlset` of every post while they fit in
// one page, otherwise a `sitemapindex` listing pages of at most `pageSize` URLs each (the protocol
// allows 50,000). Each URL is the post's, with its `lastmod` when the post has a date. Documents
// come as chunks of at most CHUNK_URLS entries, so that a large sitemap streams with bounded memory.
//
// The protocol also caps a file at 50 MB: an entry is about 70 bytes plus its URL, so 50,000 entries
// stay within it while post URLs are under 900 bytes (slugs are at most 200 characters).
import type { PostUrl } from './post-url.js'
import { escapeXml, XML_DECLARATION } from './xml.js'

export const SITEMAP_MAX_URLS = 50_000
export const SITEMAP_CONTENT_TYPE = 'application/xml; charset=utf-8'
const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9'
const CHUNK_URLS = 1000

export interface SitemapEntry {
  slug: string
  updatedAt?: Date | null
  publishedAt?: Date | null
}

export interface SitemapOptions {
  postUrl: PostUrl
  /** The absolute URL of page `page` (from 1), as the index lists it. */
  pageUrl: (page: number) => string
  /** URLs per page at most; SITEMAP_MAX_URLS unless a test asks for fewer. */
  pageSize?: number
}

/** How many urlset pages `total` posts fill: 1 means the sitemap is a single urlset, with no index. */
export function sitemapPageCount (total: number, pageSize = SITEMAP_MAX_URLS): number {
  return Math.max(1, Math.ceil(total / pageSize))
}

/**
 * The sitemap's document: with no `page`, the urlset of every post when one page holds them, else
 * the index of the pages; with `page` (from 1), that page's urlset. Undefined when there is no such
 * page (the caller answers 404). A single-page sitemap also answers as its page 1, so a crawler
 * holding an index from when there were more posts still finds them.
 */
export function sitemapDocument (entries: readonly SitemapEntry[], options: SitemapOptions, page?: number): Iterable<string> | undefined {
  const pageSize = options.pageSize ?? SITEMAP_MAX_URLS
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) throw new RangeError(`a sitemap page holds at least one URL, not ${pageSize}`)
  const pages = sitemapPageCount(entries.length, pageSize)
  if (page === undefined) return pages === 1 ? urlset(entries, options.postUrl) : sitemapIndex(entries, pages, pageSize, options.pageUrl)
  if (!Number.isSafeInteger(page) || page < 1 || page > pages) return undefined
  return urlset(entries.slice((page - 1) * pageSize, page * pageSize), options.postUrl)
}

function * urlset (entries: readonly SitemapEntry[], postUrl: PostUrl): Generator<string> {
  yield `${XML_DECLARATION}<urlset xmlns="${SITEMAP_NAMESPACE}">\n`
  for (let start = 0; start < entries.length; start += CHUNK_URLS) {
    let chunk = ''
    for (const entry of entries.slice(start, start + CHUNK_URLS)) {
      chunk += `<url><loc>${escapeXml(postUrl(entry.slug))}</loc>${lastmod(lastChange(entry))}</url>\n`
    }
    yield chunk
  }
  yield '</urlset>\n'
}

function * sitemapIndex (entries: readonly SitemapEntry[], pages: number, pageSize: number, pageUrl: (page: number) => string): Generator<string> {
  yield `${XML_DECLARATION}<sitemapindex xmlns="${SITEMAP_NAMESPACE}">\n`
  for (let page = 1; page <= pages; page++) {
    // A page's lastmod is the latest date among its posts.
    let latest: Date | undefined
    for (let index = (page - 1) * pageSize; index < Math.min(entries.length, page * pageSize); index++) {
      const changed = lastChange(entries[index]!)
      if (changed !== undefined && (latest === undefined || changed > latest)) latest = changed
    }
    yield `<sitemap><loc>${escapeXml(pageUrl(page))}</loc>${lastmod(latest)}</sitemap>\n`
  }
  yield '</sitemapindex>\n'
}

function lastChange ({ updatedAt, publishedAt }: SitemapEntry): Date | undefined {
  for (const date of [updatedAt, publishedAt]) {
    if (date instanceof Date && !Number.isNaN(date.getTime())) return date
  }
  return undefined
}

function lastmod (date: Date | undefined): string {
  return date === undefined ? '' : `<lastmod>${date.toISOString()}</lastmod>`
}
