// The public front API: validates, asks the upstream post API, and maps what comes back
// (SPEC part A, and the failure mapping of "Errors").
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import sjson from 'secure-json-parse'
import { buildHttpApp } from '../http-base.js'
import { ProblemError } from '../problems.js'
import { createSlugValidator, DEFAULT_SLUG_PATTERN } from '../slug.js'
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js'

export interface FrontAppOptions {
  upstream: UpstreamClient
  logger: Logger
  slugPattern?: RegExp
  /** Largest upstream list body read (a larger one is a 502). */
  maxListBytes?: number
  /** Largest upstream post body read. */
  maxPostBytes?: number
}

/** Retry-After sent with a relayed 503 when the upstream gave none we can pass on. */
const DEFAULT_RETRY_AFTER_S = 5
const RETRY_AFTER = /^(?:\d{1,9}|[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$/

type JsonObject = Record<string, unknown>

function isPost (value: unknown): value is JsonObject & { slug: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as JsonObject).slug === 'string'
}

function badResponse (detail: string, cause?: unknown): ProblemError {
  return new ProblemError('upstream-bad-response', detail, { cause })
}

/** Parses an upstream body; `__proto__`/`constructor.prototype` keys are refused (prototype poisoning). */
function parseUpstreamJson (body: Buffer): unknown {
  try {
    return sjson.parse(body.toString('utf8'), null, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    throw badResponse('The upstream post API answered with a body that is not acceptable JSON.', err)
  }
}

/** The outcomes every route maps the same way: 503 relayed, any other unexpected status 502. */
function unexpectedStatus (response: UpstreamResponse): ProblemError {
  if (response.status === 503) {
    const header = response.headers['retry-after']
    return new ProblemError('upstream-unavailable', 'The upstream post API is unavailable; try again shortly.', {
      retryAfter: typeof header === 'string' && RETRY_AFTER.test(header) ? header : DEFAULT_RETRY_AFTER_S
    })
  }
  return badResponse(`The upstream post API answered with status ${response.status}.`)
}

function sendJsonBytes (reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.header('content-type', 'application/json; charset=utf-8').send(body)
}

export function buildFrontApp ({
  upstream,
  logger,
  slugPattern = DEFAULT_SLUG_PATTERN,
  maxListBytes = 16 * 1024 * 1024,
  maxPostBytes = 1024 * 1024
}: FrontAppOptions): FastifyInstance {
  const app = buildHttpApp({ logger, routes: ['/api/blog', '/api/blog/:slug'] })
  const isValidSlug = createSlugValidator(slugPattern)

  app.get('/api/blog', async (request, reply) => {
    const response = await upstream.get('/api/posts', { requestId: request.id, maxBytes: maxListBytes })
    if (response.status !== 200) throw unexpectedStatus(response)
    const posts = parseUpstreamJson(response.body)
    if (!Array.isArray(posts) || !posts.every(isPost)) throw badResponse('The upstream post API did not answer with an array of posts.')
    if (posts.length === 0) throw new ProblemError('no-posts', 'There are no posts yet.')
    // Relay the bytes we checked rather than re-serialise what we parsed.
    return sendJsonBytes(reply, response.body)
  })

  app.get<{ Params: { slug: string } }>('/api/blog/:slug', async (request, reply) => {
    const { slug } = request.params
    if (!isValidSlug(slug)) {
      throw new ProblemError('invalid-slug', 'A slug is 1 to 200 lower-case letters and digits in groups joined by single hyphens.')
    }
    // Built from the encoded slug only; never `new URL(slug, base)`, which resolves dot segments and `//host`.
    const response = await upstream.get(`/api/post/${encodeURIComponent(slug)}`, { requestId: request.id, maxBytes: maxPostBytes })
    if (response.status === 404) throw new ProblemError('post-not-found', `No post has the slug "${slug}".`)
    if (response.status !== 200) throw unexpectedStatus(response)
    const post = parseUpstreamJson(response.body)
    if (!isPost(post) || post.slug !== slug) throw badResponse('The upstream post API did not answer with the requested post.')
    return sendJsonBytes(reply, response.body)
  })
  return app
}
