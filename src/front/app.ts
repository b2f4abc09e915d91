// The public front API: validates, asks the upstream post API, and maps what comes back
// (SPEC part A, and the failure mapping of "Errors"). Every request revalidates its copy with
// the upstream (conditional, coalesced), so answers are fresh yet mostly served from memory.
import cors from '@fastify/cors'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import sjson from 'secure-json-parse'
import { buildHttpApp, sendProblem, type HttpAppOptions } from '../http-base.js'
import { ProblemError } from '../problems.js'
import { createRepresentation, ifNoneMatchHolds, JSON_CONTENT_TYPE, sendRepresentation, type Representation } from '../representation.js'
import { DEFAULT_CACHE_CONTROL } from '../posts-api/app.js'
import { LIST_BUFFER_LIMIT } from '../posts-api/post-bodies.js'
import { createSlugValidator, DEFAULT_SLUG_PATTERN } from '../slug.js'
import { createCoalescer } from '../coalescer.js'
import { relayJsonArray } from './relay-stream.js'
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js'

export interface FrontAppOptions {
  upstream: UpstreamClient
  logger: Logger
  slugPattern?: RegExp
  /** Largest upstream list read or relayed (beyond it: 502, or a cut-off stream). */
  maxListBytes?: number
  /** Largest upstream post body read. */
  maxPostBytes?: number
  /** Lists above this size are relayed as a stream (first bytes checked) instead of validated whole. */
  listBufferLimit?: number
  /** `Cache-Control` of successful answers. */
  cacheControl?: string
  /** Bytes of validated upstream bodies kept for revalidation. */
  cacheMaxBytes?: number
  /** Seconds since its last validation that a copy may be served, flagged, when the upstream fails (0: never). */
  staleIfErrorS?: number
  /** Origins allowed to read cross-origin: '*' (any, the default), a list, or none ([]). */
  corsOrigins?: '*' | string[]
  server?: Pick<HttpAppOptions, 'timeouts' | 'loadShedDelayMs'>
}

/** Retry-After sent with a relayed 503 when the upstream gave none we can pass on. */
const DEFAULT_RETRY_AFTER_S = 5
const RETRY_AFTER = /^(?:\d{1,9}|[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$/
const STRONG_ETAG = /^"[\x21\x23-\x7e]*"$/
const INVALID_SLUG = 'A slug is 1 to 200 lower-case letters and digits in groups joined by single hyphens.'

type JsonObject = Record<string, unknown>

/** An upstream body that passed its shape check, kept with the validator to revalidate it. */
interface CheckedBody {
  representation: Representation
  upstreamEtag: string | undefined
  /** Lists only: the array is empty (404 at the front). */
  empty: boolean
  /** When the upstream last confirmed this copy (Date.now()). */
  validatedAt: number
}

type Outcome =
  | { kind: 'body', body: CheckedBody }
  | { kind: 'absent' }
  /** A list too large to buffer; only one of the coalesced requests can relay it. */
  | { kind: 'stream', response: UpstreamResponse, claimed: boolean }

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

function strongEtag (header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && STRONG_ETAG.test(header) ? header : undefined
}

export function buildFrontApp ({
  upstream,
  logger,
  slugPattern = DEFAULT_SLUG_PATTERN,
  maxListBytes = 1024 * 1024 * 1024,
  maxPostBytes = 1024 * 1024,
  listBufferLimit = LIST_BUFFER_LIMIT,
  cacheControl = DEFAULT_CACHE_CONTROL,
  cacheMaxBytes = 64 * 1024 * 1024,
  staleIfErrorS = 0,
  corsOrigins = '*',
  server = {}
}: FrontAppOptions): FastifyInstance {
  const corsOn = corsOrigins === '*' || corsOrigins.length > 0
  const app = buildHttpApp({ ...server, logger, routes: ['/api/blog', '/api/blog/:slug'], corsPreflight: corsOn })
  if (corsOn) {
    // Public, read-only data: never with credentials; clients may revalidate and read our headers.
    app.register(cors, {
      origin: corsOrigins,
      methods: ['GET', 'HEAD'],
      credentials: false,
      exposedHeaders: ['ETag', 'X-Request-Id', 'Retry-After', 'Cache-Status'],
      maxAge: 86_400
    })
  }
  const isValidSlug = createSlugValidator(slugPattern)
  const coalescer = createCoalescer<Outcome>()
  const cache = new LRUCache<string, CheckedBody>({
    maxSize: Math.max(1, cacheMaxBytes), // 0 disables: nothing fits
    // Room for the compressed variants made beside the body.
    sizeCalculation: (entry) => Math.ceil(entry.representation.body.length * 1.5) + 256
  })

  /** Checks a whole upstream body once; throws the 502 of SPEC when its shape is wrong. */
  function check (path: string, response: UpstreamResponse, slug: string | undefined): CheckedBody {
    const value = parseUpstreamJson(response.body)
    let empty = false
    if (slug === undefined) {
      if (!Array.isArray(value) || !value.every(isPost)) throw badResponse('The upstream post API did not answer with an array of posts.')
      empty = value.length === 0
    } else if (!isPost(value) || value.slug !== slug) {
      throw badResponse('The upstream post API did not answer with the requested post.')
    }
    const upstreamEtag = strongEtag(response.headers.etag)
    const body = { representation: createRepresentation(response.body, upstreamEtag), upstreamEtag, empty, validatedAt: Date.now() }
    // Only a body with a validator can be revalidated; the others are used once.
    if (upstreamEtag === undefined) cache.delete(path)
    else cache.set(path, body)
    return body
  }

  /** One upstream call, conditional when we hold a copy. `slug` undefined: the list. */
  async function callUpstream (path: string, slug: string | undefined, requestId: string): Promise<Outcome> {
    const held = cache.get(path)
    const response = await upstream.get(path, {
      requestId,
      ifNoneMatch: held?.upstreamEtag,
      maxBytes: slug === undefined ? maxListBytes : maxPostBytes,
      streamAbove: slug === undefined ? listBufferLimit : undefined
    })
    if (response.status === 304 && held !== undefined) {
      held.validatedAt = Date.now()
      return { kind: 'body', body: held }
    }
    if (response.status === 200) {
      if (response.stream === undefined) return { kind: 'body', body: check(path, response, slug) }
      cache.delete(path)
      return { kind: 'stream', response, claimed: false }
    }
    if (response.status === 404 && slug !== undefined) {
      cache.delete(path)
      return { kind: 'absent' }
    }
    throw unexpectedStatus(response)
  }

  async function relayStream (request: FastifyRequest, reply: FastifyReply, response: UpstreamResponse): Promise<FastifyReply> {
    const stream = response.stream
    if (stream === undefined) throw new Error('no stream to relay')
    const etag = strongEtag(response.headers.etag)
    reply.header('cache-control', cacheControl)
    if (etag !== undefined) {
      reply.header('etag', etag)
      if (ifNoneMatchHolds(request.headers['if-none-match'], etag)) {
        stream.destroy()
        return reply.code(304).send()
      }
    }
    return reply.header('content-type', JSON_CONTENT_TYPE).send(await relayJsonArray(stream))
  }

  /**
   * The coalesced upstream call; when it fails (502/503/504) and stale-if-error is on, the last
   * good copy instead, if recent enough, flagged with Cache-Status (RFC 9211).
   */
  async function outcomeFor (reply: FastifyReply, path: string, slug: string | undefined, requestId: string): Promise<Outcome> {
    try {
      return await coalescer.run(path, () => callUpstream(path, slug, requestId))
    } catch (err) {
      const held = staleIfErrorS > 0 && err instanceof ProblemError && err.status >= 502 ? cache.get(path) : undefined
      if (held === undefined || Date.now() - held.validatedAt > staleIfErrorS * 1000) throw err
      reply.header('cache-status', `blog-read-api; fwd=stale; fwd-status=${(err as ProblemError).status}; detail=stale-if-error`)
      return { kind: 'body', body: held }
    }
  }

  app.get('/api/blog', async (request, reply) => {
    let outcome = await outcomeFor(reply, '/api/posts', undefined, request.id)
    if (outcome.kind === 'stream') {
      // A stream serves one client: the others coalesced with it make their own call.
      if (outcome.claimed) outcome = await callUpstream('/api/posts', undefined, request.id)
      if (outcome.kind === 'stream') {
        outcome.claimed = true
        return await relayStream(request, reply, outcome.response)
      }
    }
    if (outcome.kind !== 'body') throw new Error('the list has no absent outcome')
    if (outcome.body.empty) return sendProblem(reply, 'no-posts', 'There are no posts yet.')
    return await sendRepresentation(request, reply, outcome.body.representation, cacheControl)
  })

  app.get<{ Params: { slug: string } }>('/api/blog/:slug', async (request, reply) => {
    const { slug } = request.params
    if (!isValidSlug(slug)) return sendProblem(reply, 'invalid-slug', INVALID_SLUG)
    // Built from the encoded slug only; never `new URL(slug, base)`, which resolves dot segments and `//host`.
    const path = `/api/post/${encodeURIComponent(slug)}`
    const outcome = await outcomeFor(reply, path, slug, request.id)
    if (outcome.kind === 'absent') return sendProblem(reply, 'post-not-found', 'No post has this slug.')
    if (outcome.kind !== 'body') throw new Error('a post is never streamed')
    return await sendRepresentation(request, reply, outcome.body.representation, cacheControl)
  })
  return app
}
