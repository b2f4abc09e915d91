// The upstream post API: the list and the post over a PostStore, with the list queries
// (fields, pages, filters, counts), strong ETags, 304s and compression, bodies built once per store change
// and query, large lists streamed, and the posts version each answer was read under (the front
// confirms its copies with it: src/contract/posts-version.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { API_DOCS_ROUTES, registerApiDocs } from '../http/docs/api-docs.js'
import type { ServerOptions } from '../config.js'
import type { Logger } from 'pino'
import { buildHttpApp, sendProblem } from '../http/app.js'
import { KEYED_LIST_CONTENT_TYPE, KEYED_LIST_PATH, shapeOf } from '../contract/keyed-list.js'
import { invalidQuery, nextLink, TOTAL_COUNT_HEADER, parseListQuery, parsePostQuery } from '../contract/list-query.js'
import { createStoreReadiness } from '../ops/store-readiness.js'
import { operationalPaths, registerOperationalRoutes, type TierOperationsOptions } from '../ops/operational-routes.js'
import { OPERATIONAL_SCHEMAS } from '../ops/operational-schemas.js'
import { createPostsMetrics } from '../ops/store-metrics.js'
import { POSTS_VERSION_HEADER, VERSION_PATH } from '../contract/posts-version.js'
import { previewIn } from '../contract/preview.js'
import { createVersionLane, versionBody, versionHeaders } from './version-lane.js'
import { capMaxAge, SCHEDULED_HEADER, scheduledInstantOf } from '../contract/posts-schedule.js'
import { ProblemError, POST_NOT_FOUND_DETAIL } from '../contract/problems.js'
import { TAGS_PATH } from '../contract/tag-counts.js'
import { JSON_CONTENT_TYPE, sendConditional, sendRepresentation } from '../http/representation.js'
import { isLookupableSlug, SLUG_MAX_LENGTH } from '../contract/slug.js'
import { StoreQueryError, StoreUnavailableError, type PostStore } from '../store/store.js'
import { createPostBodies } from './post-bodies.js'
import { createPreviewReader } from './preview-route.js'
import { withRenderedContent } from './rendered-store.js'
import { createMarkdownRenderer, type MarkdownRenderer } from '../render/markdown-renderer.js'
import { createRenderCache, DEFAULT_RENDER_CACHE_BYTES, DEFAULT_RENDER_CACHE_ENTRIES } from '../render/render-cache.js'
import { POSTS_API_DOCS, POSTS_ROUTE_SCHEMAS } from './schemas.js'
import { createStoreGate, storeBusyProblem } from './store-gate.js'
import type { Timers } from '../lib/timers.js'
import { POSTS_CHANGES_PATH } from '../sync/changes-query.js'
import { registerChangesRoute } from './changes-route.js'
import { startPostsSync, type SyncSettings } from './posts-sync-wiring.js'
import { createCacheTagHeaders } from '../sync/cache-tag-headers.js'
import { DEFAULT_SEARCH_SETTINGS, type SearchSettings } from '../search/compiled-search.js'
import { createSearchMatches } from './search-matches.js'
import { createSearchPages } from './search-pages.js'

export interface PostsAppOptions extends TierOperationsOptions {
  store: PostStore
  logger: Logger
  /** `Cache-Control` of successful answers. */
  cacheControl: string
  server: ServerOptions
  /** Serve /openapi.json and /docs (the default). */
  apiDocs?: boolean
  /** Store reads that build answers at once (STORE_CONCURRENCY); the next ones wait briefly, then 503. Undefined: no bound. */
  storeConcurrency?: number
  /** The timers of that wait (tests move them by hand). */
  timers?: Pick<Timers, 'setTimeout'>
  /** PREVIEW_SECRET: `?preview=TOKEN` on the detail route shows a post whatever the publishing rule says (unset: a 400). */
  previewSecret?: string
  /** The clock that caps `Cache-Control` at the next scheduled instant (injected in tests; the store's clock decides what is published). */
  now?: () => number
  /** The Markdown columns (MARKDOWN_COLUMNS); undefined: `content` when the table has it. */
  markdownColumns?: readonly string[]
  /** Markdown to HTML and text (tests count its calls); the project's renderer by default. */
  renderer?: MarkdownRenderer
  /** Sync polling and webhooks (SYNC_POLL_MS, WEBHOOK_URLS, WEBHOOK_SECRET); the defaults: no webhooks. */
  sync?: SyncSettings
  /** CACHE_TAG_HEADERS: the headers naming what each answer depends on (none: []). */
  cacheTagHeaders?: readonly string[]
  /** What `q` searches (SEARCH_COLUMNS, SEARCH_LANGUAGE). */
  search?: SearchSettings
  /**
   * Answer version reads below the framework (version-lane.ts), the default; false: through the
   * framework, which answers alike (the tests compare the two).
   */
  fastLane?: boolean
}

/** Retry-After while the store fails: 1 s, then doubling with each consecutive failure, at most 5 s. */
const MAX_RETRY_AFTER_S = 5

export function buildPostsApp ({
  store: givenStore, logger, cacheControl: cacheControlSetting, server, apiDocs = true, metrics, metricsRoute = true, ready, storeConcurrency, timers, now = Date.now, previewSecret, markdownColumns,
  renderer = createMarkdownRenderer(), cacheTagHeaders = [], search = DEFAULT_SEARCH_SETTINGS, sync: syncSettings = {}, fastLane = true
}: PostsAppOptions): FastifyInstance {
  const measured = metrics === undefined ? undefined : createPostsMetrics(metrics.registry, givenStore)
  const store = measured?.store ?? givenStore
  // Ready when `posts` answers a query: the same test the fronts' probes of this tier rely on.
  const operations = { ready: ready ?? createStoreReadiness(store, logger), metrics: metricsRoute ? metrics : undefined }
  const app = buildHttpApp({
    ...server,
    logger,
    routes: ['/api/posts', '/api/post/:slug', VERSION_PATH, POSTS_CHANGES_PATH, KEYED_LIST_PATH, TAGS_PATH, ...(apiDocs ? API_DOCS_ROUTES : [])],
    corsOrigins: [],
    operationalRoutes: operationalPaths(operations),
    requestMetrics: metrics?.requests('posts-api'),
    lane: fastLane ? (exchange) => versionLane.lane(exchange) : undefined
  })
  // Reads the version as the route does, when a request reaches it (the bodies exist by then).
  const versionLane = createVersionLane(versionNow)
  const gate = storeConcurrency === undefined ? undefined : createStoreGate(storeConcurrency, timers)
  // One rendering per content for the life of the process (src/render/render-cache.ts).
  const render = createRenderCache({ render: renderer, maxEntries: DEFAULT_RENDER_CACHE_ENTRIES, maxBytes: DEFAULT_RENDER_CACHE_BYTES })
  const rendered = withRenderedContent(store, { render, markdownColumns })
  const matches = createSearchMatches(rendered, search)
  // A snippet is plain text: a Markdown column's is its rendering's.
  const plainText = (column: string, value: string): string => (markdownColumns ?? ['content']).includes(column) ? render.render(value).text : value
  const searchPages = createSearchPages({ store: rendered, matches, language: search.language, plainText })
  const bodies = createPostBodies(rendered, undefined, measured?.body, gate, searchPages)
  app.addHook('onClose', async () => matches.close())
  const sync = startPostsSync({ store: givenStore, version: () => bodies.version(), logger, registry: metrics?.registry, settings: syncSettings })
  app.addHook('preClose', (done) => { sync.close(); done() })
  /** A store read that builds an answer outside the bodies (a preview), in its turn of the gate. */
  const gated = async <T>(query: () => Promise<T>): Promise<T> => gate === undefined ? await query() : await gate.run(query)
  let consecutiveFailures = 0
  // What each answer depends on, named for CDNs; undefined (nothing to do) when no header is configured.
  const tagHeaders = createCacheTagHeaders(cacheTagHeaders)

  async function read<T> (query: () => Promise<T>): Promise<T> {
    try {
      const result = await query()
      consecutiveFailures = 0
      return result
    } catch (err) {
      // The table cannot answer this query (an unknown column, no tags): the client's mistake.
      if (err instanceof StoreQueryError) throw invalidQuery(err.message)
      // No turn for a store read: this process is busy, not the store.
      const busy = storeBusyProblem(err)
      if (busy !== undefined) throw busy
      if (!(err instanceof StoreUnavailableError)) throw err
      consecutiveFailures++
      throw new ProblemError('store-unavailable', 'The post store is not answering; try again shortly.', {
        cause: err,
        retryAfter: Math.min(MAX_RETRY_AFTER_S, 2 ** Math.min(consecutiveFailures - 1, 3))
      })
    }
  }

  function labelVersion (reply: FastifyReply, version: string | undefined): void {
    if (version !== undefined) reply.header(POSTS_VERSION_HEADER, version)
  }

  /**
   * The `Cache-Control` of an answer read under `version`: no cache keeps it past the next
   * scheduled instant, which the version names, or (a store without versions) a read names. Every
   * answer made from the posts takes it from here, the one reader of CACHE_CONTROL.
   */
  async function cacheControlFor (reply: FastifyReply, version: string | undefined): Promise<string> {
    // Like the change token, whose place it takes here, this read takes no turn of the gate.
    const instant = version === undefined ? await read(async () => await givenStore.readNextScheduledInstant?.()) : scheduledInstantOf(version)
    if (instant !== undefined) reply.header(SCHEDULED_HEADER, String(instant))
    return capMaxAge(cacheControlSetting, instant, now())
  }

  async function listPosts (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = parseListQuery(request.url)
    const { body: list, version } = await read(() => bodies.list(query))
    labelVersion(reply, version)
    if (list.total !== undefined) reply.header(TOTAL_COUNT_HEADER, String(list.total))
    if (tagHeaders !== undefined) reply.headers(tagHeaders.list(query, list.kind === 'whole' ? list.representation : undefined))
    if (list.kind === 'whole') {
      if (list.next !== undefined) reply.header('link', nextLink('/api/posts', query, list.next))
      return await sendRepresentation(request, reply, list.representation, await cacheControlFor(reply, version))
    }
    // A store failure after this point can only cut the response short (the socket is
    // destroyed, so the client sees an incomplete body, never a complete-looking one).
    return await sendConditional(request, reply, { etag: list.etag, cacheControl: await cacheControlFor(reply, version) }, async () =>
      reply.header('content-type', JSON_CONTENT_TYPE).send(await read(() => bodies.streamList(query))))
  }

  async function getPost (request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const { slug } = request.params
    // Not the front's pattern: this tier serves whatever slugs the table holds.
    if (!isLookupableSlug(slug)) return sendProblem(reply, 'invalid-slug', `A slug is 1 to ${SLUG_MAX_LENGTH} characters without control characters.`)
    const query = parsePostQuery(request.url)
    const preview = previewIn(request.url)
    // Named like any answer about this slug, so that a refused token's 404 is the very 404 of a missing post.
    if (preview !== undefined && tagHeaders !== undefined) reply.headers(tagHeaders.post(slug))
    if (preview !== undefined) return await previews.serve(request, reply, slug, query, preview)
    const { body: post, version } = await read(() => bodies.post(slug, query))
    labelVersion(reply, version)
    if (tagHeaders !== undefined) reply.headers(post === null ? tagHeaders.post(slug) : tagHeaders.servedPost(slug, post))
    if (post === null) return sendProblem(reply, 'post-not-found', POST_NOT_FOUND_DETAIL)
    if (post.link !== undefined) reply.header('link', post.link)
    return await sendRepresentation(request, reply, post.representation, await cacheControlFor(reply, version))
  }

  /** The version of the posts now (null: the store cannot tell), read after the request arrived. */
  async function currentVersion (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const version = await (versionLane.handed(request.raw) ?? versionNow())
    const headers = versionHeaders(version)
    for (let i = 0; i < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1])
    return await reply.send(versionBody(version))
  }

  async function versionNow (): Promise<string | undefined> {
    return await read(() => bodies.version())
  }

  /**
   * The keyed list of a shape (src/contract/keyed-list.ts), labelled with the version read before it, so
   * that the label is never newer than the data. Never cached by anyone: a front reads it once per
   * version.
   */
  async function keyedList (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const shape = shapeOf(parseListQuery(request.url))
    if (shape.q !== undefined) throw invalidQuery('The keyed list does not take q: a search is paged in its relevance order, by its next links.')
    const version = await read(() => bodies.version())
    labelVersion(reply, version)
    const stream = await read(() => bodies.streamKeyed(shape))
    return await reply.header('cache-control', 'no-store').header('content-type', KEYED_LIST_CONTENT_TYPE).send(stream)
  }

  const previews = createPreviewReader({ store: givenStore, secret: previewSecret, now, read: async (query) => await read(() => gated(query)), version: versionNow, labelVersion })
  /** Every tag with its number of posts, read as the list is (exactly fresh, labelled). */
  async function listTags (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { body, version } = await read(() => bodies.tags())
    labelVersion(reply, version)
    if (tagHeaders !== undefined) reply.headers(tagHeaders.posts)
    return await sendRepresentation(request, reply, body, await cacheControlFor(reply, version))
  }

  registerApiDocs(app, { ...POSTS_API_DOCS, enabled: apiDocs })
  // Declared in a plugin, so that the docs plugin registered above, once loaded, records them.
  app.register(async (api) => {
    api.get('/api/posts', { schema: POSTS_ROUTE_SCHEMAS.list }, listPosts)
    api.get('/api/post/:slug', { schema: POSTS_ROUTE_SCHEMAS.post }, getPost)
    api.get(VERSION_PATH, { schema: POSTS_ROUTE_SCHEMAS.version }, currentVersion)
    api.get(KEYED_LIST_PATH, { schema: POSTS_ROUTE_SCHEMAS.keyed }, keyedList)
    api.get(TAGS_PATH, { schema: POSTS_ROUTE_SCHEMAS.tags }, listTags)
    registerChangesRoute(api, { sync, store: rendered, read: async (query) => await read(() => gated(query)), schema: POSTS_ROUTE_SCHEMAS.changes })
    registerOperationalRoutes(api, operations, OPERATIONAL_SCHEMAS)
  })
  return app
}
