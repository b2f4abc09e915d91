// The front's feeds and sitemap: `/feed.xml` (RSS 2.0), `/feed.atom` (Atom 1.0), `/feed.json`
// (JSON Feed 1.1), each of the newest FEED_SIZE posts (`tag=` narrows them), and `/sitemap.xml`
// (every post; an index of `/sitemap-N.xml` pages of at most 50,000 URLs when larger), made and
// kept by feed-documents.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import type { FeedSettings } from '../config.js'
import type { ListQuery } from '../contract/list-query.js'
import { ProblemError } from '../contract/problems.js'
import { parseTimestamp } from '../feeds/feed-post.js'
import { SITEMAP_CONTENT_TYPE, SITEMAP_MAX_URLS, sitemapDocument } from '../feeds/sitemap.js'
import { answerable } from '../http/app.js'
import { etagOf, sendRepresentation } from '../http/representation.js'
import { staleCacheStatus, type ListOutcome, type UpstreamCache } from './cache/upstream-cache.js'
import { atSiteRoot, feedContentType, FEED_PATHS, listRowsOf, type FeedDocuments, type FeedPath, type ListRows, type Site } from './feed-documents.js'
import { FEED_ROUTE_SCHEMAS } from './feed-schemas.js'
import type { CacheTagHeaders } from '../sync/cache-tag-headers.js'

export const SITEMAP_PATH = '/sitemap.xml'
export const SITEMAP_PAGE_PATH = '/sitemap-:page'

const SITEMAP_FIELDS = ['published_at', 'slug', 'updated_at']

export interface FeedRoutesOptions {
  cache: UpstreamCache
  feeds: FeedSettings
  /** Where documents are made and kept. */
  documents: FeedDocuments
  /** The `Cache-Control` of an answer sent now (capped at the next scheduled instant). */
  cacheControlNow: () => string
  /** URLs per sitemap page at most: SITEMAP_MAX_URLS unless a test asks for fewer. */
  sitemapPageSize?: number
  /** The headers naming each document's cache tags (undefined: none). */
  tagHeaders?: CacheTagHeaders | undefined
  /** The list the fast lane got for a feed it handed over (feed-lane.ts), if it did. */
  handedList?: (req: IncomingMessage) => Promise<ListOutcome> | undefined
}

export function registerFeedRoutes (api: FastifyInstance, { cache, feeds, documents, cacheControlNow, sitemapPageSize = SITEMAP_MAX_URLS, tagHeaders, handedList }: FeedRoutesOptions): void {
  function siteOf (): Site {
    if (feeds.site === undefined) throw new ProblemError('not-found', 'Feeds and the sitemap are served only when SITE_URL is set.')
    return feeds.site
  }

  /**
   * The posts of `query` as the upstream answers them now; a document made from a copy served
   * in place of a failed call says so, as the list would. `handed`: what the fast lane got for
   * this request, instead of asking again.
   */
  async function postsOf (request: FastifyRequest, reply: FastifyReply, query: ListQuery, handed?: Promise<ListOutcome>): Promise<ListRows> {
    const list = await (handed ?? cache.list(query, request.id, () => answerable(request)))
    if (list.kind === 'stream') {
      const body = await collect(list.stream)
      return listRowsOf(body, list.etag ?? etagOf(body))
    }
    if (list.stale !== undefined) reply.header('cache-status', staleCacheStatus(list.stale))
    if (list.body.empty) return { rows: () => [], source: 'empty' }
    const { body, etag } = list.body.representation
    return listRowsOf(body, etag)
  }

  async function feed (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const site = siteOf()
    const path = request.routeOptions.url as FeedPath
    const query = documents.feedQuery(request.url)
    const representation = documents.feed(site, path, query, await postsOf(request, reply, query, handedList?.(request.raw)))
    if (tagHeaders !== undefined) reply.headers(tagHeaders.list(query, representation))
    return await sendRepresentation(request, reply, representation, cacheControlNow(), feedContentType(path))
  }

  /** Every post's slug and dates; a table without those date columns gives slugs alone. */
  async function sitemapPosts (request: FastifyRequest, reply: FastifyReply): Promise<ListRows> {
    try {
      return await postsOf(request, reply, { fields: SITEMAP_FIELDS })
    } catch (err) {
      if (!(err instanceof ProblemError) || err.kind !== 'invalid-query') throw err
      return await postsOf(request, reply, { fields: ['slug'] })
    }
  }

  async function sitemap (request: FastifyRequest<{ Params: { page?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const site = siteOf()
    const pageText = request.params.page
    const page = pageText === undefined ? undefined : /^[1-9][0-9]{0,8}\.xml$/.test(pageText) ? Number(pageText.slice(0, -4)) : 0
    if (page === 0) throw new ProblemError('not-found', 'No sitemap page has this name.')
    const { rows, source } = await sitemapPosts(request, reply)
    // A page beyond the last is a 404 until posts fill it: it depends on them too.
    if (tagHeaders !== undefined) reply.headers(tagHeaders.posts)
    const pageUrl = (n: number): string => atSiteRoot(site, `/sitemap-${n}.xml`)
    const representation = documents.documentFor(`sitemap\n${page ?? 0}`, source, () => sitemapDocument(rows().map((row) => ({
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

async function collect (stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
