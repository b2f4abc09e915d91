// What both tiers' route schemas share: the post, the request and response headers, the 304.
// These schemas document (OpenAPI, src/http/docs/api-docs.ts); they neither validate nor serialise: the
// handlers check their input to answer with their own problems, and send bodies already
// serialised, every column of the row included (src/http/representation.ts).
import { MAX_TAG_LENGTH, MAX_TAGS } from '../../contract/list-filter.js'
import { MAX_FIELDS, MAX_PAGE_SIZE } from '../../contract/list-query.js'
import { MAX_CURSOR_LENGTH } from '../../contract/cursor.js'
import { DEFAULT_SORT, SORT_COLUMNS } from '../../contract/list-sort.js'
import { MAX_QUERY_LENGTH, MAX_TERMS } from '../../contract/search-query.js'
import { SLUG_MAX_LENGTH } from '../../contract/slug.js'

/** A response as @fastify/swagger reads it: description, headers, and a body per media type (none: `type: 'null'`). */
export interface ResponseSchema {
  description: string
  headers?: Record<string, unknown>
  content?: Record<string, unknown>
  type?: 'null'
}

export const JSON_MEDIA_TYPE = 'application/json'

/**
 * Marks a response header as always sent. @fastify/swagger copies a header's schema whole, and
 * `required` is no schema keyword: api-docs.ts moves this mark to the header object.
 */
export const REQUIRED_HEADER = 'x-required'

export function requiredHeader<T extends object> (header: T): T & { [REQUIRED_HEADER]: true } {
  return { ...header, [REQUIRED_HEADER]: true }
}

/** `Post`: a row of the `posts` table. Its columns are the table's, so only `slug` is fixed. */
export const POST_SCHEMA = {
  $id: 'Post',
  description: 'One row of the `posts` table: every column is a property of the same name (binary columns left out). ' +
    'Only `slug` is always there; the default table adds `id`, `title`, `summary`, `content` (Markdown), `author`, ' +
    '`tags` (array of strings), `published_at` and `updated_at` (ISO 8601 UTC).',
  type: 'object',
  required: ['slug'],
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: SLUG_MAX_LENGTH, description: 'Unique; the path segment of the post.' },
    search_snippet: {
      type: 'string',
      description: 'With `q` and `highlight=true` only: a passage of at most 200 characters of the post\'s plain text (its summary and body, ' +
        'else its title) around the words searched for, HTML-escaped, each matched word in `<mark>`…`</mark>` (the only markup), ' +
        '`…` where text was cut off.'
    }
  },
  additionalProperties: true,
  examples: [{
    id: 1,
    slug: 'hello-world',
    title: 'Hello, world',
    summary: 'The first post of this blog, served by Blog Read API.',
    content: '# Hello, world\n',
    author: 'Ada',
    tags: ['intro'],
    published_at: '2026-01-05T09:00:00.000Z',
    updated_at: '2026-01-05T09:00:00.000Z'
  }]
} as const

/** The request id a client may send, and the one every answer carries. */
const REQUEST_ID = { type: 'string', pattern: '^[\\w.-]{1,128}$' } as const

/** A strong entity tag (RFC 9110 §8.8.3): quoted, no `W/`. */
const STRONG_ETAG = { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' } as const

export const headerSchemas = {
  requestId: {
    ...REQUEST_ID,
    description: 'Your id for this request (1 to 128 of `A-Z a-z 0-9 _ . -`): passed to the upstream, echoed, logged. Any other value is replaced by a generated UUID.'
  },
  ifNoneMatch: {
    type: 'string',
    description: 'ETags of the copies you hold: the answer is 304 when one is current (weak comparison; any encoding variant matches).'
  },
  acceptEncoding: {
    type: 'string',
    description: '`br` or `gzip` compress a body of 1 KiB or more, by your q-values (`br` on a tie).'
  },
  requestIdEcho: requiredHeader({ ...REQUEST_ID, description: 'The request id: yours when it was valid, else a generated UUID.' }),
  cacheControl: { type: 'string', description: '`CACHE_CONTROL` (default `no-cache`: keep a copy, revalidate it with its ETag).' },
  etag: { ...STRONG_ETAG, description: 'Strong ETag of this body; a compressed variant adds `-br` or `-gz` inside the quotes.' },
  vary: { type: 'string', pattern: '[Aa]ccept-[Ee]ncoding', description: 'Names `accept-encoding`: the body depends on it.' },
  contentEncoding: { type: 'string', enum: ['br', 'gzip'], description: 'Set when the body is compressed.' },
  totalCount: {
    type: 'string',
    pattern: '^(?:0|[1-9][0-9]*)$',
    description: 'With `count=exact` only: how many posts match every filter of the query, whatever `limit` and `after`.'
  },
  link: {
    type: 'string',
    pattern: '^<[^<>]+>; rel="next"$',
    description: 'RFC 8288, when more posts follow this page: `<ROUTE?limit=N&after=CURSOR&…>; rel="next"`, the next page on ' +
      'this tier\'s own route (a relative reference), with every other parameter of this one.'
  },
  neighbours: {
    type: 'string',
    pattern: '^<[^<>]+>; rel="(?:prev|next)"(?:, <[^<>]+>; rel="next")?$',
    description: 'RFC 8288: the post\'s neighbours in the default list order, on this tier\'s own detail route (the slug percent-encoded): ' +
      '`rel="prev"` the newer post, `rel="next"` the older one; either is absent at an end of the list. As fresh as the post, and covered by its ETag.'
  },
  retryAfter: {
    type: 'string',
    pattern: '^(?:\\d+|[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT)$',
    description: 'Seconds (or an HTTP date) to wait before retrying.'
  }
} as const

const FIELD = '[A-Za-z_][A-Za-z0-9_]{0,62}'

/** `fields`, on every route: the columns to serve. */
export const FIELDS = {
  type: 'string',
  pattern: `^${FIELD}(?:,${FIELD}){0,${MAX_FIELDS - 1}}$`,
  description: `Only these columns of each post (1 to ${MAX_FIELDS} names, comma-separated), in the table's order; \`slug\` always. ` +
    'A name that is not a column of `posts` is a 400 `invalid-query`, except the computed fields `reading_time` (minutes, words ÷ 275 rounded up, ' +
    'at least 1), `word_count` and `excerpt` (`summary` when not blank, else the first 200 characters of the text cut at a word), computed from ' +
    'the first Markdown column, which is not served unless named too.'
} as const

/** `formats`, on the list and detail routes: the representations of each Markdown column. */
export const FORMATS = {
  type: 'string',
  pattern: '^(?:html|text)(?:,(?:html|text))*$',
  description: 'Adds, for each Markdown column `C` served (`content` unless MARKDOWN_COLUMNS says), `C_html` (CommonMark and GitHub tables, ' +
    'strikethrough and autolinks; raw HTML escaped; only http, https, mailto and relative links; headings with ids) and/or `C_text` (plain text). ' +
    'Null when the column is null.'
} as const

/** A tag set: `tag`, `tag_all`, `tag_not`. */
function tagSet (what: string): object {
  return {
    type: 'string',
    minLength: 1,
    pattern: '^[^,\\u0000-\\u001f\\u007f-\\u009f]+(?:,[^,\\u0000-\\u001f\\u007f-\\u009f]+)*$',
    description: `Only posts whose \`tags\` (a JSON array of strings, or a PostgreSQL \`text[]\`) hold ${what} of these tags: 1 to ${MAX_TAGS} tags ` +
      `separated by commas, each 1 to ${MAX_TAG_LENGTH} characters without a comma or control character, matched exactly (case counts; ` +
      'percent-encode `+` and the like). A table without such a `tags` column is a 400 `invalid-query`.'
  }
}

/** A date window's bound. */
function dateBound (column: string, side: 'after' | 'before'): object {
  return {
    type: 'string',
    pattern: '^\\d{4}-\\d{2}-\\d{2}(?:[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2}))?$',
    description: `Only posts whose \`${column}\` is strictly ${side} this instant: an RFC 3339 timestamp (its \`+\` percent-encoded as \`%2B\`) ` +
      `or a date (its start in UTC). A post without a \`${column}\` is left out; a table without that column, or whose column holds no dates, is a 400 \`invalid-query\`.`
  }
}

/**
 * The list parameters (src/contract/list-query.ts). Documented only: a malformed value is the
 * handler's 400 `invalid-query`, naming the parameter; so is a parameter not listed here, or one
 * given twice.
 */
export const LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    fields: FIELDS,
    formats: FORMATS,
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      description: `A page: at most this many posts (plain digits, 1 to ${MAX_PAGE_SIZE}), with a \`Link\` to the next page when more follow.`
    },
    after: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The cursor of a `next` link, unchanged: the posts after the last one of the previous page (keyset, never an offset). ' +
        'It belongs to the order of its list: with another `sort`, or a search\'s without `sort` (its relevance order) used otherwise, a 400 `invalid-query`.'
    },
    sort: {
      type: 'string',
      enum: SORT_COLUMNS.flatMap((column) => [column, `-${column}`]),
      description: `The list order: a column (${SORT_COLUMNS.map((c) => `\`${c}\``).join(', ')}; one the table lacks is a 400 \`invalid-query\`), ` +
        `ascending, or descending after \`-\`; default \`${DEFAULT_SORT}\` (newest first). Ties by \`slug\` ascending, posts without a value ` +
        'last in both directions; text by Unicode code points (`B` before `a`, `a` before `a `), on every store.'
    },
    tag: tagSet('any'),
    tag_all: tagSet('every one'),
    tag_not: tagSet('none'),
    published_after: dateBound('published_at', 'after'),
    published_before: dateBound('published_at', 'before'),
    updated_after: dateBound('updated_at', 'after'),
    q: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY_LENGTH,
      description: 'Full-text search of `title`, `summary` and `content` (SEARCH_COLUMNS): words (all must match), `"quoted phrases"`, ' +
        '`-excluded` words or phrases, and `OR` between terms (`a OR b c` is (a or b) and c); any other character is part of a word, never ' +
        'an operator of the store\'s engine. Words match by stem (SEARCH_LANGUAGE, default `english`), case and accents folded. Without `sort`, ' +
        'the most relevant come first (a title match above a body match), ties by `slug`; with it, the matches in that order; the pages of one search within one posts version ' +
        `never repeat a post. At most ${MAX_QUERY_LENGTH} characters and ${MAX_TERMS} terms, with at least one word that is not excluded, else a 400 \`invalid-query\`.`
    },
    highlight: {
      type: 'string',
      enum: ['true'],
      description: 'With `q` only: each post carries `search_snippet`, the passage around the words searched for, HTML-escaped, matches in `<mark>`.'
    },
    count: {
      type: 'string',
      enum: ['exact'],
      description: 'The answer carries `X-Total-Count`: how many posts match the filters, whatever `limit` and `after`.'
    }
  }
} as const

/** The body of the tags routes: every tag with its number of posts. */
export const TAG_COUNTS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['tag', 'count'],
    properties: { tag: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
    additionalProperties: false
  }
} as const

/** The `:slug` path parameter of a detail route: what `pattern` says, at most SLUG_MAX_LENGTH characters. */
export function slugParams (pattern: string, description: string): Record<string, unknown> {
  return {
    type: 'object',
    required: ['slug'],
    properties: { slug: { type: 'string', minLength: 1, maxLength: SLUG_MAX_LENGTH, pattern, description } }
  }
}

/** The detail routes' query: `fields`, `formats`, and a preview token. */
export const PREVIEW_POST_QUERY = {
  type: 'object',
  properties: {
    fields: FIELDS,
    formats: FORMATS,
    preview: {
      type: 'string',
      description: 'A preview token (`blog-read-api preview-url SLUG`): the post is served whether published or not, ' +
        'with `Cache-Control: private, no-store`, never from or into a cache. A token that is forged, expired or for another slug ' +
        'gets the same 404 as a missing post; without `PREVIEW_SECRET` on the post API, a 400 `invalid-query`.'
    }
  }
} as const

/** The request headers of every route: validators and the request id. */
export const REQUEST_HEADERS = {
  type: 'object',
  properties: {
    'If-None-Match': headerSchemas.ifNoneMatch,
    'Accept-Encoding': headerSchemas.acceptEncoding,
    'X-Request-Id': headerSchemas.requestId
  }
} as const

/**
 * The headers of a 200. `whole`: a body held whole (a post, or a list up to the streaming
 * threshold) always has its ETag and may be compressed; a list streamed as it is read has an ETag
 * only when the store tracks changes, and is never compressed.
 */
export function successHeaders (whole: boolean): Record<string, unknown> {
  return {
    'X-Request-Id': headerSchemas.requestIdEcho,
    'Cache-Control': requiredHeader(headerSchemas.cacheControl),
    ETag: whole ? requiredHeader(headerSchemas.etag) : headerSchemas.etag,
    Vary: whole ? requiredHeader(headerSchemas.vary) : headerSchemas.vary,
    'Content-Encoding': headerSchemas.contentEncoding
  }
}

/** 304 Not Modified: the ETag of the copy the client holds, no body. */
export function notModifiedResponse (whole: boolean): ResponseSchema {
  return {
    description: 'Not Modified: a copy named in `If-None-Match` is current. No body.',
    type: 'null',
    headers: {
      'X-Request-Id': headerSchemas.requestIdEcho,
      'Cache-Control': requiredHeader(headerSchemas.cacheControl),
      ETag: requiredHeader(headerSchemas.etag),
      Vary: whole ? requiredHeader(headerSchemas.vary) : headerSchemas.vary
    }
  }
}

/** The `Post` schema of POST_SCHEMA, by reference. */
export const POST_REF = { $ref: 'Post#' } as const
