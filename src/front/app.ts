// The public front API: validates, asks the upstream post API through its cache, and answers
// (its routes: the list, a post, tags, feeds and sitemaps, changes; and the failure mapping of
// docs/api.md, "Errors"). The routes only: how bodies are fetched, revalidated and checked is
// cache/upstream-cache.ts; the calls themselves, upstream/client.ts.
import { POST_NOT_FOUND_DETAIL } from '../contract/problems.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { API_DOCS_ROUTES, registerApiDocs } from '../http/docs/api-docs.js'
import type { BodyLimits } from '../contract/body-limits.js'
import type { Config, ServerOptions } from '../config.js'
import { answerable, buildHttpApp, sendProblem } from '../http/app.js'
import { describeFilter } from '../contract/list-filter.js'
import { FRONT_TAGS_PATH } from '../contract/tag-counts.js'
import { nextLink, parseListQuery, parsePostQuery, TOTAL_COUNT_HEADER, type ListQuery } from '../contract/list-query.js'
import type { SortKey } from '../contract/cursor.js'
import { createFrontMetrics } from '../ops/front-metrics.js'
import { createUpstreamReadiness } from '../ops/health.js'
import { operationalPaths, registerOperationalRoutes, type TierOperationsOptions } from '../ops/operational-routes.js'
import { OPERATIONAL_SCHEMAS } from '../ops/operational-schemas.js'
import { JSON_CONTENT_TYPE, sendConditional, sendRepresentation } from '../http/representation.js'
import { createSlugValidator, SLUG_MAX_LENGTH } from '../contract/slug.js'
import { relayJsonArray } from './relay-stream.js'
import { registerFeedRoutes, SITEMAP_PAGE_PATH, SITEMAP_PATH } from './feed-routes.js'
import { createFeedDocuments, FEED_PATHS } from './feed-documents.js'
import { createFeedLane } from './feed-lane.js'
import { FRONT_API_DOCS, frontRouteSchemas } from './schemas.js'
import { createUpstreamCache, staleCacheStatus, type ListOutcome, type Stale } from './cache/upstream-cache.js'
import { watchScheduledInstant } from './scheduled-instant.js'
import { previewIn } from '../contract/preview.js'
import { BLOG_ROUTE, neighbourLink, type Neighbours } from '../contract/neighbours.js'
import { relayPreview } from './preview-relay.js'
import type { UpstreamClient } from './upstream/client.js'
import { createHeldLane, LIST_ROUTE, POST_ROUTE_PATTERN } from './held-lane.js'
import { CHANGES_PATH } from '../sync/changes-query.js'
import { registerChangesRelay } from './changes-relay.js'
import type { Timers } from '../lib/timers.js'
import { createCacheTagHeaders } from '../sync/cache-tag-headers.js'

/** The settings the front reads, as the settings table gives them. */
export type FrontSettings = Pick<Config, 'slugPattern' | 'cacheControl' | 'cacheMaxBytes' | 'cacheDiskMaxBytes' | 'staleIfErrorS' | 'corsOrigins' | 'feeds' | 'cacheTagHeaders'>

export interface FrontAppOptions extends FrontSettings, BodyLimits, TierOperationsOptions {
  upstream: UpstreamClient
  logger: Logger
  server: ServerOptions
  /** Serve /openapi.json and /docs (the default). */
  apiDocs?: boolean
  /** The clock that caps `Cache-Control` at the next scheduled instant (injected in tests). */
  now?: () => number
  /** URLs per sitemap page at most (tests ask for fewer than the protocol's 50,000). */
  sitemapPageSize?: number
  /** The change stream's heartbeats and upstream retries (tests move them by hand). */
  syncTimers?: Timers
  /**
   * Answer the commonest requests below the framework (held-lane.ts), the default; false: every
   * request through the framework, which answers alike (the tests compare the two).
   */
  fastLane?: boolean
}

/** Why a list is empty: the filter that matched nothing, or no posts at all. */
function noPostsDetail (query: ListQuery): string {
  const filter = describeFilter(query)
  if (filter !== undefined) return `No post matches ${filter}${query.after === undefined ? '' : ' after this cursor'}.`
  return query.after === undefined ? 'There are no posts yet.' : 'No post follows this cursor.'
}

const INVALID_SLUG = `A slug is 1 to ${SLUG_MAX_LENGTH} lower-case letters and digits in groups joined by single hyphens.`

export function buildFrontApp ({
  upstream, logger, server, slugPattern, cacheControl: cacheControlSetting, cacheMaxBytes, cacheDiskMaxBytes, staleIfErrorS, corsOrigins, maxListBytes, maxPostBytes, listBufferLimit, apiDocs = true,
  metrics, metricsRoute = true, ready, now = Date.now, feeds, sitemapPageSize, cacheTagHeaders, syncTimers, fastLane = true
}: FrontAppOptions): FastifyInstance {
  // Public, read-only data: CORS (GET and HEAD, never with credentials) on every answer, per CORS_ORIGIN.
  const operations = { ready: ready ?? createUpstreamReadiness(upstream), metrics: metricsRoute ? metrics : undefined }
  const app = buildHttpApp({
    ...server,
    logger,
    routes: [LIST_ROUTE, POST_ROUTE_PATTERN, FRONT_TAGS_PATH, CHANGES_PATH, ...FEED_PATHS, SITEMAP_PATH, SITEMAP_PAGE_PATH, ...(apiDocs ? API_DOCS_ROUTES : [])],
    corsOrigins,
    operationalRoutes: operationalPaths(operations),
    requestMetrics: metrics?.requests('front'),
    lane: fastLane ? (exchange) => held.lane(exchange) || feedLane.lane(exchange) : undefined
  })
  const isValidSlug = createSlugValidator(slugPattern)
  const sources = { inRotation: () => upstream.inRotation(), held: () => cache.held(), heldOnDisk: () => cache.heldOnDisk() }
  const observer = metrics === undefined ? undefined : createFrontMetrics(metrics.registry, sources)
  // Every answer made from the posts takes its Cache-Control from here: no cache downstream keeps
  // it past the next scheduled instant.
  const schedule = watchScheduledInstant(upstream, { cacheControl: cacheControlSetting, now })
  const { cacheControlNow } = schedule
  // What each answer depends on, named for CDNs; undefined (nothing to do) when no header is configured.
  const tagHeaders = createCacheTagHeaders(cacheTagHeaders)
  const cache = createUpstreamCache({ upstream: schedule.upstream, cacheMaxBytes, cacheDiskMaxBytes, staleIfErrorS, maxListBytes, maxPostBytes, listBufferLimit, observer, now })
  app.addHook('onClose', async () => await cache.close())

  /** A copy served in place of a failed call says so (RFC 9211). */
  function flagStale (reply: FastifyReply, stale: Stale | undefined): void {
    if (stale === undefined) return
    reply.header('cache-status', staleCacheStatus(stale))
  }

  /** Our own link to the next page, on our own route: only the upstream's cursor is taken from its answer. */
  function linkNext (reply: FastifyReply, query: ListQuery, next: SortKey | undefined): void {
    if (next !== undefined) reply.header('link', nextLink(LIST_ROUTE, query, next))
  }

  async function relayList (request: FastifyRequest, reply: FastifyReply, { stream, etag, length }: Extract<ListOutcome, { kind: 'stream' }>): Promise<FastifyReply> {
    await sendConditional(request, reply, { etag, cacheControl: cacheControlNow() }, async () => {
      if (length !== undefined) reply.header('content-length', length)
      return reply.header('content-type', JSON_CONTENT_TYPE).send(await relayJsonArray(stream))
    })
    // Not relayed (304): release the upstream connection now.
    if (reply.statusCode === 304) stream.destroy()
    return reply
  }

  async function listPosts (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    // A malformed parameter is a 400 here, before any upstream call.
    const query = parseListQuery(request.url)
    const list = await (held.handedList(request.raw) ?? cache.list(query, request.id, () => answerable(request)))
    if (list.kind === 'stream') {
      if (tagHeaders !== undefined) reply.headers(tagHeaders.list(query))
      if (list.total !== undefined) reply.header(TOTAL_COUNT_HEADER, String(list.total))
      linkNext(reply, query, list.next)
      return await relayList(request, reply, list)
    }
    flagStale(reply, list.stale)
    if (tagHeaders !== undefined) reply.headers(tagHeaders.list(query, list.body.representation))
    if (list.body.empty) return sendProblem(reply, 'no-posts', noPostsDetail(query))
    if (list.body.total !== undefined) reply.header(TOTAL_COUNT_HEADER, String(list.body.total))
    linkNext(reply, query, list.body.next)
    return await sendRepresentation(request, reply, list.body.representation, cacheControlNow())
  }

  // Made at a held post's first answer and kept with its neighbours (none: '').
  const links = new WeakMap<Neighbours, string>()
  function linkTo (neighbours: Neighbours): string {
    let link = links.get(neighbours)
    if (link === undefined) {
      // Our own route; a neighbour whose slug this front would refuse is not linked.
      const { prev, next } = neighbours
      link = neighbourLink(BLOG_ROUTE, { ...(prev !== undefined && isValidSlug(prev) ? { prev } : {}), ...(next !== undefined && isValidSlug(next) ? { next } : {}) }) ?? ''
      links.set(neighbours, link)
    }
    return link
  }

  async function getPost (request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const { slug } = request.params
    if (!isValidSlug(slug)) return sendProblem(reply, 'invalid-slug', INVALID_SLUG)
    const query = parsePostQuery(request.url)
    const token = previewIn(request.url)
    // Named like any answer about this slug, so that a refused token's 404 is the very 404 of a missing post.
    if (token !== undefined && tagHeaders !== undefined) reply.headers(tagHeaders.post(slug))
    if (token !== undefined) return await relayPreview(upstream, request, reply, { slug, query, token, maxBytes: maxPostBytes })
    const post = await (held.handedPost(request.raw) ?? cache.post(slug, query, request.id, () => answerable(request)))
    if (post.kind === 'absent') {
      if (tagHeaders !== undefined) reply.headers(tagHeaders.post(slug))
      return sendProblem(reply, 'post-not-found', POST_NOT_FOUND_DETAIL)
    }
    flagStale(reply, post.stale)
    const link = post.body.neighbours === undefined ? '' : linkTo(post.body.neighbours)
    if (link !== '') reply.header('link', link)
    if (tagHeaders !== undefined) reply.headers(tagHeaders.servedPost(slug, post.body.representation))
    return await sendRepresentation(request, reply, post.body.representation, cacheControlNow())
  }

  // The commonest answers of the two routes above, and of the feeds, written below the framework.
  const held = createHeldLane({ cache, isValidSlug, invalidSlugDetail: INVALID_SLUG, tagHeaders, cacheControlNow, linkTo })
  const documents = createFeedDocuments(feeds.feedSize)
  const feedLane = createFeedLane({ cache, feeds, documents, tagHeaders, cacheControlNow })

  async function listTags (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const tags = await cache.tags(request.id, () => answerable(request))
    flagStale(reply, tags.stale)
    if (tagHeaders !== undefined) reply.headers(tagHeaders.posts)
    return await sendRepresentation(request, reply, tags.body.representation, cacheControlNow())
  }

  registerApiDocs(app, { ...FRONT_API_DOCS, enabled: apiDocs })
  const schemas = frontRouteSchemas(slugPattern)
  // Declared in a plugin, so that the docs plugin registered above, once loaded, records them.
  app.register(async (api) => {
    api.get(LIST_ROUTE, { schema: schemas.list }, listPosts)
    api.get(POST_ROUTE_PATTERN, { schema: schemas.post }, getPost)
    api.get(FRONT_TAGS_PATH, { schema: schemas.tags }, listTags)
    registerFeedRoutes(api, { cache, feeds, documents, cacheControlNow, sitemapPageSize, tagHeaders, handedList: feedLane.handedList })
    registerChangesRelay(api, { upstream, logger, maxBytes: maxListBytes, streamAbove: listBufferLimit, schema: schemas.changes, timers: syncTimers })
    registerOperationalRoutes(api, operations, OPERATIONAL_SCHEMAS)
  })
  return app
}
