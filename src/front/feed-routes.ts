// The front's feeds and sitemap: `/feed.xml` (RSS 2.0), `/feed.atom` (Atom 1.0), `/feed.json`
// (JSON Feed 1.1), each of the newest FEED_SIZE posts (`tag=` narrows them), and `/sitemap.xml`
// (every post; an index of `/sitemap-N.xml` pages of at most 50,000 URLs when larger). Each is
// made from a list the upstream cache fetched and confirmed for this request (so exactly fresh),
// and kept, per document and query, for as long as that list's ETag stays: a request the list
// did not change for costs no rewrite. The document's strong ETag is its bytes' hash.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Readable } from 'node:stream'
import type { FeedSettings } from '../config.js'
import { canonicalSearch, parseListQuery, type ListQuery } from '../contract/list-query.js'
import { ProblemError } from '../contract/problems.js'
import { ATOM_CONTENT_TYPE, writeAtom } from '../feeds/atom.js'
import type { Feed } from '../feeds/feed.js'
import { feedPostFromRow, parseTimestamp } from '../feeds/feed-post.js'
import { JSON_FEED_CONTENT_TYPE, writeJsonFeed } from '../feeds/json-feed.js'
import { RSS_CONTENT_TYPE, writeRss } from '../feeds/rss.js'
import { SITEMAP_CONTENT_TYPE, SITEMAP_MAX_URLS, sitemapDocument } from '../feeds/sitemap.js'
import { excerpt } from '../render/computed-fields.js'
import { answerable } from '../http/app.js'
import { createRepresentation, etagOf, sendRepresentation, type Representation } from '../http/representation.js'
import type { UpstreamCache } from './cache/upstream-cache.js'
import { FEED_ROUTE_SCHEMAS } from './feed-schemas.js'
import type { CacheTagHeaders } from '../sync/cache-tag-headers.js'

export const FEED_PATHS = ['/feed.xml', '/feed.atom', '/feed.json'] as const
export const SITEMAP_PATH = '/sitemap.xml'
export const SITEMAP_PAGE_PATH = '/sitemap-:page'

const WRITERS: Record<(typeof FEED_PATHS)[number], { write: (feed: Feed) => string, contentType: string }> = {
  '/feed.xml': { write: writeRss, contentType: RSS_CONTENT_TYPE },
  '/feed.atom': { write: writeAtom, contentType: ATOM_CONTENT_TYPE },
  '/feed.json': { write: writeJsonFeed, contentType: JSON_FEED_CONTENT_TYPE }
}

/** Documents kept (each feed and tag is one, each sitemap page one). */
const MAX_DOCUMENTS = 256
const SITEMAP_FIELDS = ['published_at', 'slug', 'updated_at']

export interface FeedRoutesOptions {
  cache: UpstreamCache
  feeds: FeedSettings
  /** The `Cache-Control` of an answer sent now (capped at the next scheduled instant). */
  cacheControlNow: () => string
  /** URLs per sitemap page at most: SITEMAP_MAX_URLS unless a test asks for fewer. */
  sitemapPageSize?: number
  /** The headers naming each document's cache tags (undefined: none). */
  tagHeaders?: CacheTagHeaders | undefined
}

export function registerFeedRoutes (api: FastifyInstance, { cache, feeds, cacheControlNow, sitemapPageSize = SITEMAP_MAX_URLS, tagHeaders }: FeedRoutesOptions): void {
  const documents = new LRUCache<string, { source: string, representation: Representation }>({ max: MAX_DOCUMENTS })

  function siteOf (): NonNullable<FeedSettings['site']> {
    if (feeds.site === undefined) throw new ProblemError('not-found', 'Feeds and the sitemap are served only when SITE_URL is set.')
    return feeds.site
  }

  /**
   * The posts of `query` as the upstream answers them now: the answer's ETag (what a document is
   * made from) and its rows, parsed only when asked (a kept document needs none).
   */
  async function postsOf (request: FastifyRequest, query: ListQuery): Promise<{ rows: () => Array<Record<string, unknown>>, source: string }> {
    const list = await cache.list(query, request.id, () => answerable(request))
    if (list.kind === 'stream') {
      const body = await collect(list.stream)
      return { rows: () => parseRows(body), source: list.etag ?? etagOf(body) }
    }
    if (list.body.empty) return { rows: () => [], source: 'empty' }
    const { body, etag } = list.body.representation
    return { rows: () => parseRows(body), source: etag }
  }

  /** The document for `key`, made by `make` unless the list it was made from is unchanged. */
  function documentFor (key: string, source: string, make: () => string | Iterable<string> | undefined): Representation | undefined {
    const kept = documents.get(key)
    if (kept?.source === source) return kept.representation
    const made = make()
    if (made === undefined) return undefined
    const representation = createRepresentation(Buffer.from(typeof made === 'string' ? made : [...made].join('')))
    documents.set(key, { source, representation })
    return representation
  }

  async function feed (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const site = siteOf()
    const path = request.routeOptions.url as (typeof FEED_PATHS)[number]
    const { tag } = parseListQuery(request.url)
    const query: ListQuery = { limit: feeds.feedSize, formats: ['html', 'text'], ...(tag === undefined ? {} : { tag }) }
    const { rows, source } = await postsOf(request, query)
    const { write, contentType } = WRITERS[path]
    const representation = documentFor(`${path}${canonicalSearch(query)}`, source, () => write({
      title: site.url.host,
      homeUrl: site.url.href,
      selfUrl: atSiteRoot(site, `${path}${canonicalSearch(tag === undefined ? {} : { tag })}`),
      postUrl: site.postUrl,
      posts: rows().map((row) => feedPostFromRow(row, markdownColumnOf(row), excerpt))
    }))!
    if (tagHeaders !== undefined) reply.headers(tagHeaders.list(query, representation))
    return await sendRepresentation(request, reply, representation, cacheControlNow(), contentType)
  }

  /** Every post's slug and dates; a table without those date columns gives slugs alone. */
  async function sitemapPosts (request: FastifyRequest): Promise<{ rows: () => Array<Record<string, unknown>>, source: string }> {
    try {
      return await postsOf(request, { fields: SITEMAP_FIELDS })
    } catch (err) {
      if (!(err instanceof ProblemError) || err.kind !== 'invalid-query') throw err
      return await postsOf(request, { fields: ['slug'] })
    }
  }

  async function sitemap (request: FastifyRequest<{ Params: { page?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const site = siteOf()
    const pageText = request.params.page
    const page = pageText === undefined ? undefined : /^[1-9][0-9]{0,8}\.xml$/.test(pageText) ? Number(pageText.slice(0, -4)) : 0
    if (page === 0) throw new ProblemError('not-found', 'No sitemap page has this name.')
    const { rows, source } = await sitemapPosts(request)
    // A page beyond the last is a 404 until posts fill it: it depends on them too.
    if (tagHeaders !== undefined) reply.headers(tagHeaders.posts)
    const pageUrl = (n: number): string => atSiteRoot(site, `/sitemap-${n}.xml`)
    const representation = documentFor(`sitemap\n${page ?? 0}`, source, () => sitemapDocument(rows().map((row) => ({
      slug: String(row.slug),
      publishedAt: parseTimestamp(row.published_at) ?? null,
      updatedAt: parseTimestamp(row.updated_at) ?? null
    })), { postUrl: site.postUrl, pageUrl, pageSize: sitemapPageSize }, page))
    if (representation === undefined) throw new ProblemError('not-found', 'No sitemap page has this number.')
    return await sendRepresentation(request, reply, representation, cacheControlNow(), SITEMAP_CONTENT_TYPE)
  }

  for (const path of FEED_PATHS) api.get(path, { schema: FEED_ROUTE_SCHEMAS[path] }, feed)
  api.get(SITEMAP_PATH, { schema: FEED_ROUTE_SCHEMAS[SITEMAP_PATH] }, sitemap)
  api.get(SITEMAP_PAGE_PATH, { schema: FEED_ROUTE_SCHEMAS[SITEMAP_PAGE_PATH] }, sitemap)
}

/**
 * The public URL of one of this front's documents (`/feed.xml?tag=sql`, `/sitemap-2.xml`): at the
 * root of SITE_URL's origin, which routes these paths to this front (docs/api.md, "Feeds and
 * sitemap"). Not the request's Host: a document is kept for every client, and the front may sit
 * behind the site under another name.
 */
function atSiteRoot (site: NonNullable<FeedSettings['site']>, pathAndSearch: string): string {
  return new URL(pathAndSearch, site.url).href
}

/** The column whose `_html` the row carries (MARKDOWN_COLUMNS is the post API's setting): the first such. */
function markdownColumnOf (row: Readonly<Record<string, unknown>>): string | undefined {
  return Object.keys(row).find((name) => name.endsWith('_html') && name.slice(0, -5) in row)?.slice(0, -5)
}

function parseRows (body: Buffer): Array<Record<string, unknown>> {
  return JSON.parse(body.toString('utf8')) as Array<Record<string, unknown>>
}

async function collect (stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
