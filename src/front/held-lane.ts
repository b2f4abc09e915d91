// The front's fast lane (src/http/fast-lane.ts): the refused slug, the missing post, and a post
// (with its fields and formats) or a list whose copy is held and current, answered below the
// framework. Every other outcome (a copy served stale, a list relayed as a stream, an empty list,
// an error) is handed to the routes of app.ts together with the outcome itself, so that nothing
// is asked upstream twice.
import { POST_NOT_FOUND_DETAIL } from '../contract/problems.js'
import type { IncomingMessage } from 'node:http'
import { settle, type LaneExchange, type Lane } from '../http/fast-lane.js'
import { nextLink, parseListQuery, parsePostQuery, TOTAL_COUNT_HEADER, type ListQuery, type PostQuery } from '../contract/list-query.js'
import { previewIn } from '../contract/preview.js'
import { BLOG_ROUTE, type Neighbours } from '../contract/neighbours.js'
import { SLUG_MAX_LENGTH } from '../contract/slug.js'
import type { CacheTagHeaders } from '../sync/cache-tag-headers.js'
import type { ListOutcome, PostOutcome, UpstreamCache } from './cache/upstream-cache.js'

/** The routes, as the framework names them (the metrics' labels). */
export const LIST_ROUTE = '/api/blog'
export const POST_ROUTE_PATTERN = '/api/blog/:slug'

/**
 * Path segments the lane reads as a slug as they are. A segment with anything else (percent-encoding,
 * which the router decodes; `;`, which it may treat as a delimiter) goes to the router, whose
 * reading then decides.
 */
const PLAIN_SEGMENT = new RegExp(`^[\\w.~-]{1,${SLUG_MAX_LENGTH}}$`)

export interface HeldLaneOptions {
  cache: UpstreamCache
  isValidSlug: (slug: string) => boolean
  /** The detail of the 400 of a slug `isValidSlug` refuses. */
  invalidSlugDetail: string
  tagHeaders: CacheTagHeaders | undefined
  /** `Cache-Control` of an answer sent now. */
  cacheControlNow: () => string
  /** The `Link` header of a post with `neighbours` ('' for none). */
  linkTo: (neighbours: Neighbours) => string
}

export interface HeldLane {
  lane: Lane
  /** What the lane got for a post it handed over (undefined: it did not take the request). */
  handedPost: (req: IncomingMessage) => Promise<PostOutcome> | undefined
  /** What the lane got for a list it handed over. */
  handedList: (req: IncomingMessage) => Promise<ListOutcome> | undefined
}

export function createHeldLane ({ cache, isValidSlug, invalidSlugDetail, tagHeaders, cacheControlNow, linkTo }: HeldLaneOptions): HeldLane {
  const posts = new WeakMap<IncomingMessage, Promise<PostOutcome>>()
  const lists = new WeakMap<IncomingMessage, Promise<ListOutcome>>()
  function post (exchange: LaneExchange, url: string): boolean {
    const queryAt = url.indexOf('?', BLOG_ROUTE.length)
    const slug = url.slice(BLOG_ROUTE.length, queryAt === -1 ? undefined : queryAt)
    if (!PLAIN_SEGMENT.test(slug)) return false
    // The slug first, as the route checks it: a refused slug is its 400 whatever the parameters say.
    if (!isValidSlug(slug)) {
      exchange.problem(POST_ROUTE_PATTERN, 'invalid-slug', invalidSlugDetail)
      return true
    }
    let query: PostQuery
    try {
      query = parsePostQuery(url)
    } catch {
      return false
    }
    // A preview is relayed by the route, never held.
    if (queryAt !== -1 && previewIn(url) !== undefined) return false
    settle(exchange, cache.post(slug, query, exchange.id, () => exchange.answerable()), posts, (outcome) => {
      if (outcome.kind === 'absent') {
        exchange.problem(POST_ROUTE_PATTERN, 'post-not-found', POST_NOT_FOUND_DETAIL, tagHeaders === undefined ? [] : tagHeaders.postHeaderList(slug))
        return true
      }
      if (outcome.stale !== undefined) return false
      const { representation, neighbours } = outcome.body
      const link = neighbours === undefined ? '' : linkTo(neighbours)
      const headers = link === '' ? [] : ['link', link]
      if (tagHeaders !== undefined) headers.push(...tagHeaders.listOf(tagHeaders.servedPost(slug, representation)))
      return exchange.representation(POST_ROUTE_PATTERN, representation, cacheControlNow(), headers)
    })
    return true
  }

  function list (exchange: LaneExchange, url: string): boolean {
    let query: ListQuery
    try {
      query = parseListQuery(url)
    } catch {
      // Refused by the route, with its problem.
      return false
    }
    settle(exchange, cache.list(query, exchange.id, () => exchange.answerable()), lists, (outcome) => {
      if (outcome.kind !== 'body' || outcome.stale !== undefined || outcome.body.empty) return false
      const { representation, total, next } = outcome.body
      const headers = tagHeaders === undefined ? [] : [...tagHeaders.listOf(tagHeaders.list(query, representation))]
      if (total !== undefined) headers.push(TOTAL_COUNT_HEADER, String(total))
      if (next !== undefined) headers.push('link', nextLink(LIST_ROUTE, query, next))
      return exchange.representation(LIST_ROUTE, representation, cacheControlNow(), headers)
    })
    return true
  }

  return {
    lane (exchange) {
      const url = exchange.req.url as string
      if (!url.startsWith(LIST_ROUTE)) return false
      if (url.length === LIST_ROUTE.length || url.charCodeAt(LIST_ROUTE.length) === 0x3f /* ? */) return list(exchange, url)
      return url.startsWith(BLOG_ROUTE) && post(exchange, url)
    },
    handedPost: (req) => posts.get(req),
    handedList: (req) => lists.get(req)
  }
}
