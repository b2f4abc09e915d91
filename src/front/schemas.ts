// The front's routes as schemas, for its OpenAPI document (src/http/docs/api-docs.ts). Documentation only:
// the handlers check the slug themselves and send the upstream's bytes (src/http/docs/route-schemas.ts).
import { problemResponses, type ProblemResponseOptions } from '../http/docs/problem-schema.js'
import { headerSchemas, JSON_MEDIA_TYPE, LIST_QUERY, TAG_COUNTS_SCHEMA, notModifiedResponse, PREVIEW_POST_QUERY, POST_REF, REQUEST_HEADERS, slugParams, successHeaders } from '../http/docs/route-schemas.js'
import { anchorSlugPattern, SLUG_MAX_LENGTH } from '../contract/slug.js'
import { changesRouteSchema } from '../http/docs/changes-schema.js'

export const FRONT_API_DOCS = {
  title: 'Blog Read API: front',
  description: 'The public API of the blog: its posts as JSON, read through the upstream post API. ' +
    'With `PUBLISHED_ONLY` on the post API, drafts and scheduled, unpublished or deleted posts are absent from every answer (a hidden post is ' +
    'the same 404 as a missing one), a scheduled post appears when its instant passes, and `Cache-Control` max-age never outlasts that instant. ' +
    'Every route answers GET and HEAD (the same answer without a body); every error is an RFC 9457 problem document.'
}

export const CACHE_STATUS = {
  type: 'string',
  pattern: '^blog-read-api; fwd=stale; fwd-status=50[234]; detail=stale-if-error$',
  description: 'RFC 9211: present only when the upstream failed and a copy confirmed within `STALE_IF_ERROR_S` seconds is served instead.'
} as const

const UPSTREAM_FAILURES = ['upstream-unreachable', 'upstream-bad-response', 'upstream-unavailable', 'upstream-timeout'] as const

const PROBLEM_OPTIONS: ProblemResponseOptions = { retryAfterOnGatewayErrors: true }

/** The front's two routes; `slugPattern` is SLUG_PATTERN, as the route applies it. */
export function frontRouteSchemas (slugPattern: RegExp): { list: object, post: object, tags: object, changes: object } {
  const slug = anchorSlugPattern(slugPattern)
  return {
    list: {
      operationId: 'listPosts',
      summary: 'Every post, or a page of them',
      description: 'The upstream post API\'s list, byte for byte: newest first by `published_at` when the table has it, ties by `slug`. ' +
        'The list parameters trim it (`fields`), page it (`limit`, `after`), order it (`sort`), filter it (`tag`, `tag_all`, `tag_not`, `published_after`, ' +
        '`published_before`, `updated_after`) or search it (`q`, most relevant first unless sorted; `highlight`); they are checked here, before any upstream call (an unknown or repeated parameter is a 400 ' +
        '`invalid-query` too), and relayed in canonical order. An empty list or page is a 404 `no-posts` whose detail names the filters.',
      tags: ['posts'],
      querystring: LIST_QUERY,
      headers: REQUEST_HEADERS,
      response: {
        200: {
          description: 'The posts, at least one.',
          headers: { ...successHeaders(false), Link: headerSchemas.link, 'X-Total-Count': headerSchemas.totalCount, 'Cache-Status': CACHE_STATUS },
          content: { [JSON_MEDIA_TYPE]: { schema: { type: 'array', minItems: 1, items: POST_REF } } }
        },
        304: withLink(withCacheStatus(notModifiedResponse(false))),
        ...problemResponses(['invalid-query', 'no-posts', ...UPSTREAM_FAILURES], { ...PROBLEM_OPTIONS, headers: { 404: { 'Cache-Status': CACHE_STATUS } } })
      }
    },
    post: {
      operationId: 'getPost',
      summary: 'One post, by its slug',
      description: 'The slug is checked first (400 `invalid-slug`, and the upstream is not called); then the upstream\'s post, byte for byte. ' +
        '`fields` keeps only those columns. `Link` names its neighbours in the default list order, on this route.',
      tags: ['posts'],
      querystring: PREVIEW_POST_QUERY,
      params: slugParams(slug.source, `\`SLUG_PATTERN\`${slug.flags === '' ? '' : ` (flags \`${slug.flags}\`)`}, at most ${SLUG_MAX_LENGTH} characters, never \`.\` nor \`..\`, checked after percent-decoding.`),
      headers: REQUEST_HEADERS,
      response: {
        200: {
          description: 'The post whose `slug` is this one.',
          headers: { ...successHeaders(true), Link: headerSchemas.neighbours, 'Cache-Status': CACHE_STATUS },
          content: { [JSON_MEDIA_TYPE]: { schema: POST_REF } }
        },
        304: withNeighbours(withCacheStatus(notModifiedResponse(true))),
        ...problemResponses(['invalid-slug', 'invalid-query', 'post-not-found', ...UPSTREAM_FAILURES], PROBLEM_OPTIONS)
      }
    },
    tags: {
      operationId: 'listTags',
      summary: 'Every tag with its number of posts',
      description: 'The upstream post API\'s tag counts, byte for byte: `[{"tag": "sql", "count": 4}]`, most used first, ties by tag; ' +
        'counted over the posts the list holds, and as fresh as the list.',
      tags: ['posts'],
      headers: REQUEST_HEADERS,
      response: {
        200: {
          description: 'The tags (possibly none).',
          headers: { ...successHeaders(true), 'Cache-Status': CACHE_STATUS },
          content: { [JSON_MEDIA_TYPE]: { schema: TAG_COUNTS_SCHEMA } }
        },
        304: withCacheStatus(notModifiedResponse(true)),
        ...problemResponses([...UPSTREAM_FAILURES], PROBLEM_OPTIONS)
      }
    },
    changes: changesRouteSchema(UPSTREAM_FAILURES, PROBLEM_OPTIONS)
  }
}

function withCacheStatus (response: ReturnType<typeof notModifiedResponse>): ReturnType<typeof notModifiedResponse> {
  return { ...response, headers: { ...response.headers, 'Cache-Status': CACHE_STATUS } }
}

/** A post's 304 carries its neighbour links too. */
function withNeighbours (response: ReturnType<typeof notModifiedResponse>): ReturnType<typeof notModifiedResponse> {
  return { ...response, headers: { ...response.headers, Link: headerSchemas.neighbours } }
}

/** A page's 304 carries its next link too. */
function withLink (response: ReturnType<typeof notModifiedResponse>): ReturnType<typeof notModifiedResponse> {
  return { ...response, headers: { ...response.headers, Link: headerSchemas.link, 'X-Total-Count': headerSchemas.totalCount } }
}
