// The post API's routes as schemas, for its OpenAPI document (src/http/docs/api-docs.ts). Documentation
// only: the handlers check the slug themselves and send bodies built from the rows as they are
// (src/http/docs/route-schemas.ts).
import { problemResponses } from '../http/docs/problem-schema.js'
import { headerSchemas, JSON_MEDIA_TYPE, LIST_QUERY, TAG_COUNTS_SCHEMA, notModifiedResponse, PREVIEW_POST_QUERY, POST_REF, REQUEST_HEADERS, slugParams, successHeaders } from '../http/docs/route-schemas.js'
import { KEYED_LIST_CONTENT_TYPE } from '../contract/keyed-list.js'
import { VERSION_PATH, VERSION_PATTERN } from '../contract/posts-version.js'
import { SLUG_MAX_LENGTH } from '../contract/slug.js'
import { changesRouteSchema } from '../http/docs/changes-schema.js'

export const POSTS_API_DOCS = {
  title: 'Blog Read API: post API',
  description: 'The upstream post API: the rows of the `posts` table as JSON, read afresh from the store (a committed change shows in the next answer). ' +
    'With `PUBLISHED_ONLY`, only the rows the publishing rule shows now (a hidden post is the same 404 as a missing one). Binary columns are never served. ' +
    'Every route answers GET and HEAD (the same answer without a body); every error is an RFC 9457 problem document.'
}

/** Sent on every answer of the post routes when the store tracks changes (src/contract/posts-version.ts). */
const POSTS_VERSION = {
  type: 'string',
  pattern: VERSION_PATTERN.source,
  description: `The version of the posts this answer was read under: equal to what ${VERSION_PATH} answers later only if nothing ` +
    'was committed to `posts` in between. Opaque; the same from every post API process reading the same store state, ' +
    'except on a SQLite file `migrate` never ran on, where each process has versions of its own. ' +
    'Absent when the store does not track changes (MySQL/MariaDB). Under `PUBLISHED_ONLY` it ends with `~` and the next scheduled ' +
    'instant (ms since the epoch) while a post is scheduled: it moves when that instant passes, with no write.'
} as const

/** Sent with a successful answer while a post is scheduled (src/contract/posts-schedule.ts). */
const POSTS_SCHEDULED_AT = {
  type: 'string',
  pattern: '^\\d{1,16}$',
  description: 'Under `PUBLISHED_ONLY`: the next instant (ms since the epoch) at which a scheduled post becomes public. ' +
    '`Cache-Control` max-age is capped at the seconds left until it. Absent when no post is scheduled.'
} as const

export const POSTS_ROUTE_SCHEMAS = {
  list: {
    operationId: 'listPosts',
    summary: 'Every row of `posts`, or a page of them',
    description: 'Newest first by `published_at` when the table has it (undated posts last), ties and tables without it by `slug` (bytewise); `sort` orders otherwise. ' +
      'A list over 8 MiB is streamed: no `Content-Length`, no compression, and an ETag only when the store tracks changes; a page ' +
      '(`limit`) is built whole. The list parameters are checked against the table too (a column it lacks, no `tags`, no date column for a date window: 400 `invalid-query`). ' +
      'With `q`, the matches come most relevant first, from the store\'s search index when `migrate --search` made one, else from an index this process keeps in memory; ' +
      'a search is answered whole (no streaming).',
    tags: ['posts'],
    querystring: LIST_QUERY,
    headers: REQUEST_HEADERS,
    response: {
      200: {
        description: 'Every post, or the page (possibly none).',
        headers: { ...successHeaders(false), Link: headerSchemas.link, 'X-Total-Count': headerSchemas.totalCount, 'Posts-Version': POSTS_VERSION, 'Posts-Scheduled-At': POSTS_SCHEDULED_AT },
        content: { [JSON_MEDIA_TYPE]: { schema: { type: 'array', items: POST_REF } } }
      },
      304: { ...notModifiedResponse(false), headers: { ...notModifiedResponse(false).headers, Link: headerSchemas.link, 'X-Total-Count': headerSchemas.totalCount, 'Posts-Version': POSTS_VERSION, 'Posts-Scheduled-At': POSTS_SCHEDULED_AT } },
      ...problemResponses(['invalid-query', 'store-unavailable'])
    }
  },
  post: {
    operationId: 'getPost',
    summary: 'The row whose `slug` is this one',
    description: 'Matched exactly (case, accents and trailing spaces count, whatever the column\'s collation); `fields` keeps only those columns. ' +
      '`Link` names its neighbours in the default list order.',
    tags: ['posts'],
    querystring: PREVIEW_POST_QUERY,
    // No control characters (nor lone surrogates, which a pattern cannot say): anything a store can hold.
    params: slugParams('^[^\\u0000-\\u001f\\u007f]+$', `Any slug the table may hold: 1 to ${SLUG_MAX_LENGTH} characters, no control characters.`),
    headers: REQUEST_HEADERS,
    response: {
      200: {
        description: 'The post.',
        headers: { ...successHeaders(true), Link: headerSchemas.neighbours, 'Posts-Version': POSTS_VERSION, 'Posts-Scheduled-At': POSTS_SCHEDULED_AT },
        content: { [JSON_MEDIA_TYPE]: { schema: POST_REF } }
      },
      304: { ...notModifiedResponse(true), headers: { ...notModifiedResponse(true).headers, Link: headerSchemas.neighbours, 'Posts-Version': POSTS_VERSION, 'Posts-Scheduled-At': POSTS_SCHEDULED_AT } },
      ...problemResponses(['invalid-slug', 'invalid-query', 'post-not-found', 'store-unavailable'])
    }
  },
  version: {
    operationId: 'getPostsVersion',
    summary: 'The version of the posts now',
    description: 'Read from the store after the request arrived. A copy of an answer labelled with this version (its `Posts-Version`) ' +
      'is current: the front confirms every copy it holds with one such call instead of a call per copy. Never cached.',
    tags: ['posts'],
    headers: { type: 'object', properties: { 'X-Request-Id': headerSchemas.requestId } },
    response: {
      200: {
        description: 'The version, or null when the store does not track changes (then no answer carries one).',
        headers: { 'X-Request-Id': headerSchemas.requestIdEcho, 'Cache-Control': { type: 'string', const: 'no-store' }, 'Posts-Version': POSTS_VERSION },
        content: {
          [JSON_MEDIA_TYPE]: {
            schema: {
              type: 'object',
              required: ['version'],
              properties: { version: { anyOf: [POSTS_VERSION, { type: 'null' }] } },
              additionalProperties: false
            }
          }
        }
      },
      ...problemResponses(['store-unavailable'])
    }
  },
  keyed: {
    operationId: 'getKeyedList',
    summary: 'Every post of a list shape, each after its cursor',
    description: 'The list of `fields`, `sort`, the filters and `formats` (`limit`, `after` and `count` are ignored), in list order, one line per post: its cursor (what ' +
      '`after` takes to resume after it), a space, the post as the list serves it, a line feed. A front holds it to answer any page of ' +
      'that shape from memory, confirmed by the version it is labelled with. Streamed, never cached. `q` is a 400 `invalid-query` here.',
    tags: ['posts'],
    querystring: LIST_QUERY,
    headers: { type: 'object', properties: { 'X-Request-Id': headerSchemas.requestId } },
    response: {
      200: {
        description: 'The posts, a line each (none: an empty body).',
        headers: { 'X-Request-Id': headerSchemas.requestIdEcho, 'Cache-Control': { type: 'string', const: 'no-store' }, 'Posts-Version': POSTS_VERSION },
        content: { [KEYED_LIST_CONTENT_TYPE.split(';')[0] as string]: { schema: { type: 'string' } } }
      },
      ...problemResponses(['invalid-query', 'store-unavailable'])
    }
  },
  changes: changesRouteSchema(['store-unavailable']),
  tags: {
    operationId: 'listTags',
    summary: 'Every tag with its number of posts',
    description: 'The strings of each post\'s `tags` (a JSON array, or a PostgreSQL `text[]`), counted over the posts the list holds, ' +
      'each post once per tag: most used first, ties by tag (bytewise). Read as the list is (a committed change shows in the next answer). ' +
      'A table without `tags`: an empty array.',
    tags: ['posts'],
    headers: REQUEST_HEADERS,
    response: {
      200: {
        description: 'The tags (possibly none).',
        headers: { ...successHeaders(true), 'Posts-Version': POSTS_VERSION },
        content: { [JSON_MEDIA_TYPE]: { schema: TAG_COUNTS_SCHEMA } }
      },
      304: { ...notModifiedResponse(true), headers: { ...notModifiedResponse(true).headers, 'Posts-Version': POSTS_VERSION } },
      ...problemResponses(['store-unavailable'])
    }
  }
} as const
