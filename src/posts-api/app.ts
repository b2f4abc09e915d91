// The upstream post API: the two reads of SPEC part A over a PostStore.
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { buildHttpApp } from '../http-base.js'
import { ProblemError } from '../problems.js'
import { isLookupableSlug } from '../slug.js'
import { StoreUnavailableError, type PostStore } from '../store/store.js'

export interface PostsAppOptions {
  store: PostStore
  logger: Logger
}

/** Retry-After while the store fails: 1 s, then doubling with each consecutive failure, at most 5 s. */
const MAX_RETRY_AFTER_S = 5

export function buildPostsApp ({ store, logger }: PostsAppOptions): FastifyInstance {
  const app = buildHttpApp({ logger, routes: ['/api/posts', '/api/post/:slug'] })
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

  const sendJson = (reply: FastifyReply, value: unknown): FastifyReply =>
    reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(value))

  app.get('/api/posts', async (_request, reply) => sendJson(reply, await read(() => store.listPosts())))

  app.get<{ Params: { slug: string } }>('/api/post/:slug', async (request, reply) => {
    const { slug } = request.params
    // Not the front's pattern: this tier serves whatever slugs the table holds.
    if (!isLookupableSlug(slug)) throw new ProblemError('invalid-slug', 'A slug is 1 to 200 characters without control characters.')
    const post = await read(() => store.findPostBySlug(slug))
    if (post === undefined) throw new ProblemError('post-not-found', 'No post has this slug.')
    return sendJson(reply, post)
  })
  return app
}
