// What an upstream answer must be before the front serves or holds it, checked once when it
// arrives: pure functions of the answer, which turn any other answer into the problem the route
// gives (502 for a wrong shape or status, 503 relayed with its Retry-After, 400 relayed for a
// query the upstream refused).
import sjson from 'secure-json-parse'
import { isTagCounts } from '../../contract/tag-counts.js'
import { TOTAL_COUNT_HEADER } from '../../contract/list-query.js'
import { encodeCursor, nextCursorIn, type SortKey } from '../../contract/cursor.js'
import { PROBLEM_TYPE_BASE, ProblemError, RETRY_AFTER_S } from '../../contract/problems.js'
import { isStorableText } from '../../contract/slug.js'
import { neighboursIn, POST_ROUTE, type Neighbours } from '../../contract/neighbours.js'
import { createRepresentation, etagOf, type Representation } from '../../http/representation.js'
import type { UpstreamResponse } from '../upstream/client.js'

/** An upstream body that passed its shape check. */
export interface CheckedBody {
  representation: Representation
  /** Lists only: the array is empty (404 at the front). */
  empty: boolean
  /** Pages only: where the next page starts, when more posts follow (from the upstream's Link). */
  next?: SortKey
  /** Lists with `count=exact` only: the upstream's X-Total-Count. */
  total?: number
  /** Posts only: the neighbours the upstream's Link names. */
  neighbours?: Neighbours
}

/**
 * What the body of a call must be: the list (a page of at most `limit` posts when set) or the
 * post `slug`; `queried`: the call carries list-query parameters (so a 400 of the upstream may
 * be the client's mistake, relayed).
 */
export type Expected =
  | { kind: 'list', limit: number | undefined, queried: boolean, counted?: boolean }
  | { kind: 'post', slug: string, queried: boolean }
  | { kind: 'tags', queried: false }

const RETRY_AFTER = /^(?:\d{1,9}|[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$/
const STRONG_ETAG = /^"[\x21\x23-\x7e]*"$/
/** A relayed problem detail longer than this is not relayed (an upstream we do not recognise). */
const MAX_RELAYED_DETAIL = 500

type JsonObject = Record<string, unknown>

/** A post as the front relays one: an object with a string `slug` (the rest is the upstream's to decide). */
export function isPost (value: unknown): value is JsonObject & { slug: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as JsonObject).slug === 'string'
}

/** Parses JSON from an upstream; throws on `__proto__`/`constructor.prototype` keys (prototype poisoning). */
export function parseUpstreamJson (text: string): unknown {
  return sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' })
}

export function badResponse (detail: string, cause?: unknown): ProblemError {
  return new ProblemError('upstream-bad-response', detail, { cause })
}

/**
 * The body of a 200 read whole, checked against `expected` (502 when its shape is wrong), and the
 * upstream's strong ETag if it sent one: only such a body can be revalidated, and held.
 */
export function checkBody (response: UpstreamResponse, expected: Expected): { body: CheckedBody, upstreamEtag: string | undefined } {
  let value: unknown
  try {
    value = parseUpstreamJson(response.body.toString('utf8'))
  } catch (err) {
    throw badResponse('The upstream post API answered with a body that is not acceptable JSON.', err)
  }
  if (expected.kind === 'tags') {
    if (!isTagCounts(value)) throw badResponse('The upstream post API did not answer with tag counts.')
  } else if (expected.kind === 'list') {
    if (!Array.isArray(value) || !value.every(isPost)) throw badResponse('The upstream post API did not answer with an array of posts.')
    if (expected.limit !== undefined && value.length > expected.limit) throw badResponse('The upstream post API answered with more posts than the limit.')
  } else if (!isPost(value) || value.slug !== expected.slug) {
    throw badResponse('The upstream post API did not answer with the requested post.')
  }
  const next = nextCursor(response, expected)
  const neighbours = neighboursOf(response, expected)
  const upstreamEtag = strongEtag(response.headers.etag)
  // Without the upstream's validator, ours must cover the links as well as the bytes.
  const links = `${next === undefined ? '' : `\n${encodeCursor(next)}`}${neighbours === undefined ? '' : `\n${JSON.stringify(neighbours)}`}`
  const etag = upstreamEtag ?? etagOf(response.body, links)
  const total = totalCount(response, expected)
  const body = {
    representation: createRepresentation(response.body, etag === upstreamEtag || total === undefined ? etag : etagOf(Buffer.from(`${etag}\ntotal ${total}`))),
    empty: Array.isArray(value) && value.length === 0,
    ...(next === undefined ? {} : { next }),
    ...(total === undefined ? {} : { total }),
    ...(neighbours === undefined ? {} : { neighbours })
  }
  return { body, upstreamEtag }
}

/** The upstream's X-Total-Count, for a list that asked for it (then it must be there, a whole number). */
export function totalCount (response: UpstreamResponse, expected: Expected): number | undefined {
  if (expected.kind !== 'list' || expected.counted !== true) return undefined
  const header = response.headers[TOTAL_COUNT_HEADER]
  const total = typeof header === 'string' && /^(?:0|[1-9]\d{0,14})$/.test(header) ? Number(header) : undefined
  if (total === undefined) throw badResponse('The upstream post API did not say how many posts the list holds.')
  return total
}

/**
 * Where the next page starts, from the upstream's Link header: only for a page, and only its
 * cursor, checked as a client's would be. The link itself is never followed nor passed on.
 */
export function nextCursor (response: UpstreamResponse, expected: Expected): SortKey | undefined {
  const header = response.headers.link
  if (expected.kind !== 'list' || expected.limit === undefined || header === undefined) return undefined
  const next = nextCursorIn(Array.isArray(header) ? header.join(', ') : header)
  if (next === null) throw badResponse('The upstream post API sent a next link without a valid cursor.')
  return next
}

/** A post's neighbours, from the upstream's Link header (links to its own detail route). */
export function neighboursOf (response: UpstreamResponse, expected: Expected): Neighbours | undefined {
  const header = response.headers.link
  if (expected.kind !== 'post' || header === undefined) return undefined
  const neighbours = neighboursIn(Array.isArray(header) ? header.join(', ') : header, POST_ROUTE)
  if (neighbours === undefined) throw badResponse('The upstream post API sent a neighbour link that is not to a post.')
  return neighbours.prev === undefined && neighbours.next === undefined ? undefined : neighbours
}

/** The upstream refused the query's parameters (a column it lacks, no tags): the client's 400, with its detail. */
export function relayedInvalidQuery (response: UpstreamResponse): ProblemError {
  let problem: unknown
  try {
    problem = parseUpstreamJson(response.body.toString('utf8'))
  } catch {}
  const { type, detail } = (typeof problem === 'object' && problem !== null ? problem : {}) as { type?: unknown, detail?: unknown }
  if (type !== `${PROBLEM_TYPE_BASE}invalid-query` || typeof detail !== 'string' || detail.length > MAX_RELAYED_DETAIL || !isStorableText(detail)) {
    return badResponse('The upstream post API answered with status 400.')
  }
  return new ProblemError('invalid-query', detail)
}

/** The outcomes every route maps the same way: 503 relayed with its Retry-After, any other unexpected status 502. */
export function unexpectedStatus (response: UpstreamResponse): ProblemError {
  if (response.status === 503) {
    const header = response.headers['retry-after']
    return new ProblemError('upstream-unavailable', 'The upstream post API is unavailable; try again shortly.', {
      retryAfter: typeof header === 'string' && RETRY_AFTER.test(header) ? header : RETRY_AFTER_S
    })
  }
  return badResponse(`The upstream post API answered with status ${response.status}.`)
}

export function strongEtag (header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && STRONG_ETAG.test(header) ? header : undefined
}
