// The upstream post API: the two reads of SPEC part A over a PostStore, with strong ETags,
// 304s and compression, bodies built once per store change, large lists streamed.
import type { FastifyInstance } from 'fastify'
import type { ServerOptions } from '../config.js'
import type { Logger } from 'pino'
import { buildHttpApp, sendProblem } from '../http-base.js'
import { ProblemError } from '../problems.js'
import { JSON_CONTENT_TYPE, sendConditional, sendRepresentation } from '../representation.js'
import { isLookupableSlug, SLUG_MAX_LENGTH } from '../slug.js'
import { StoreUnavailableError, type PostStore } from '../store/store.js'
import { createPostBodies } from './post-bodies.js'

export interface PostsAppOptions {
  store: PostStore
  logger: Logger
  /** `Cache-Control` of successful answers. */
  cacheControl: string
  server: ServerOptions
}

/** Retry-After while the store fails: 1 s, then doubling with each consecutive failure, at most 5 s. */
const MAX_RETRY_AFTER_S = 5

export function buildPostsApp ({ store, logger, cacheControl, server }: PostsAppOptions): FastifyInstance {
  const app = buildHttpApp({ ...server, logger, routes: ['/api/posts', '/api/post/:slug'], corsOrigins: [] })
  const bodies = createPostBodies(store)
  let consecutiveFailures = 0

  async function read<T> (query: () => Promise<T>): Promise<T> {
    try {
      const result = await query()
      consecutiveFailures = 0
      return result
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err
      consecutiveFailures++
      throw new ProblemError('store-unavailable', 'The post store is not answering; try again shortly.', {
        cause: err,
        retryAfter: Math.min(MAX_RETRY_AFTER_S, 2 ** Math.min(consecutiveFailures - 1, 3))
      })
    }
  }

  app.get('/api/posts', async (request, reply) => {
    const list = await read(() => bodies.list())
    if (list.kind === 'whole') return await sendRepresentation(request, reply, list.representation, cacheControl)
    // A store failure after this point can only cut the response short (the socket is
    // destroyed, so the client sees an incomplete body, never a complete-looking one).
    return await sendConditional(request, reply, { etag: list.etag, cacheControl }, async () =>
      reply.header('content-type', JSON_CONTENT_TYPE).send(await read(() => bodies.streamList())))
  })

  app.get<{ Params: { slug: string } }>('/api/post/:slug', async (request, reply) => {
    const { slug } = request.params
    // Not the front's pattern: this tier serves whatever slugs the table holds.
    if (!isLookupableSlug(slug)) return sendProblem(reply, 'invalid-slug', `A slug is 1 to ${SLUG_MAX_LENGTH} characters without control characters.`)
    const post = await read(() => bodies.post(slug))
    if (post === null) return sendProblem(reply, 'post-not-found', 'No post has this slug.')
    return await sendRepresentation(request, reply, post, cacheControl)
  })
  return app
}
