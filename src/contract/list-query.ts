// The optional list parameters (`fields`, `limit`, `after`, `sort`, the filters of list-filter.ts,
// `highlight`, `count`, `formats`), shared by both tiers: checked
// the same way at the front (before any upstream call) and at the post API, written back in one
// canonical order (cache keys, upstream paths, Link headers), and the keyset cursor that `after`
// carries. A parameter that is not one of them, or one given twice, is refused: a typo must not
// look like it worked.
import { canonicalFilter, DATE_FILTERS, FILTER_DETAILS, parseInstant, parseTags, TAG_FILTERS, type ListFilter } from './list-filter.js'
import { FORMATS_DETAIL, parseFormats, type Format } from './formats.js'
import { cursorSort, parseSort, RELEVANCE, SORT_DETAIL, sortOrder, type ListSort } from './list-sort.js'
import { ProblemError } from './problems.js'
import { parseSearchQuery } from './search-query.js'
import { isLookupableSlug, isStorableText } from './slug.js'

/** Sent with `count=exact`: how many posts the query's filters keep, whatever its limit and cursor. */
export const TOTAL_COUNT_HEADER = 'x-total-count'

/** The most posts one page may hold. */
export const MAX_PAGE_SIZE = 1000
/** The most column names one `fields` may list. */
export const MAX_FIELDS = 100
/** Longest cursor accepted: a 200-character slug and a long `published_at` text fit with room. */
export const MAX_CURSOR_LENGTH = 2048

/** A sort column's value exactly as the store holds it (text, or a number in SQLite; null: none). */
export type CursorValue = string | number | null

/**
 * Where a page ends in the list order: the last post's slug and its sort column's value exactly
 * as the store holds it. The served value is not enough: it is normalised (PostgreSQL
 * microseconds become milliseconds). In the default order the value is `publishedAt` (absent
 * when the table has no such column); in any other, `sort` names the order and `value` holds
 * its column's value (absent when that column is the slug).
 */
export interface SortKey {
  readonly slug: string
  readonly publishedAt?: CursorValue
  readonly sort?: ListSort
  readonly value?: CursorValue
  /** In a search's relevance order (`q` without a sort): the post's relevance then (larger first). */
  readonly rank?: number
}

export interface ListQuery extends ListFilter {
  /** Columns to serve, sorted bytewise, `slug` always among them; undefined: every column. */
  readonly fields?: readonly string[]
  /** At most this many posts (a page); undefined: all of them. */
  readonly limit?: number
  /** Only posts after this one in the list order. */
  readonly after?: SortKey
  /** The list order as given (list-sort.ts); undefined: the default one, or with `q` its relevance order. */
  readonly sort?: ListSort
  /** With `q`: each post carries `search_snippet` (src/search/search-snippet.ts). */
  readonly highlight?: true
  /** `exact`: the answer says how many posts match the filter (X-Total-Count). */
  readonly count?: 'exact'
  /** Representations added for each Markdown column (src/contract/formats.ts). */
  readonly formats?: readonly Format[]
}

/** What the detail routes accept. */
export type PostQuery = Pick<ListQuery, 'fields' | 'formats'>

const NO_QUERY: ListQuery = Object.freeze({})

/** An SQL identifier every store accepts unquoted in spirit; PostgreSQL's limit is 63 bytes. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/
const LIMIT = /^[1-9][0-9]{0,3}$/
const BASE64URL = /^[A-Za-z0-9_-]+$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

export const QUERY_DETAILS = {
  limit: `The limit parameter must be a whole number from 1 to ${MAX_PAGE_SIZE}.`,
  after: 'The after parameter must be the cursor of a next link, unchanged.',
  afterSort: 'The after parameter is the cursor of a list in another order: keep the sort and q parameters of the link that gave it.',
  sort: SORT_DETAIL,
  fields: `The fields parameter must list 1 to ${MAX_FIELDS} column names (letters, digits and underscores, not starting with a digit), separated by commas.`,
  count: 'The count parameter must be exact.',
  highlight: 'The highlight parameter must be true, and comes with q.',
  formats: FORMATS_DETAIL
} as const

/** Every parameter a list accepts, in canonical order. */
export const LIST_PARAMETERS: readonly string[] = [
  'limit', 'after', 'sort', 'fields', ...TAG_FILTERS.map(([, name]) => name), ...DATE_FILTERS.map(([, name]) => name), 'q', 'highlight', 'formats', 'count'
]

export function invalidQuery (detail: string): ProblemError {
  return new ProblemError('invalid-query', detail)
}

/** The parameters of a list request (`url`: the request target); an unknown or repeated one is a 400. */
export function parseListQuery (url: string): ListQuery {
  const params = searchParamsOf(url)
  if (params === undefined) return NO_QUERY
  checkNames(params, LIST_PARAMETERS)
  const limit = single(params, 'limit')
  const after = single(params, 'after')
  const sortText = single(params, 'sort')
  const sort = sortText === undefined ? undefined : parseSort(sortText) ?? failWith(QUERY_DETAILS.sort)
  const fields = single(params, 'fields')
  const count = single(params, 'count')
  const q = single(params, 'q')
  const highlight = single(params, 'highlight')
  const query: Record<string, unknown> = {
    ...(limit === undefined ? {} : { limit: parseLimit(limit) }),
    ...(after === undefined ? {} : { after: parseCursor(after, cursorSort(sort, q !== undefined)) }),
    ...(sort === undefined ? {} : { sort }),
    ...(fields === undefined ? {} : { fields: parseFields(fields) }),
    ...formatsOf(params)
  }
  for (const [key, name] of TAG_FILTERS) {
    const text = single(params, name)
    if (text !== undefined) query[key] = parseTags(text) ?? failWith(FILTER_DETAILS.tags(name))
  }
  for (const [key, name] of DATE_FILTERS) {
    const text = single(params, name)
    if (text !== undefined) query[key] = parseInstant(text) ?? failWith(FILTER_DETAILS.date(name))
  }
  if (q !== undefined) {
    parseSearchQuery(q)
    query.q = q
  }
  if (highlight !== undefined && (highlight !== 'true' || q === undefined)) throw invalidQuery(QUERY_DETAILS.highlight)
  if (highlight !== undefined) query.highlight = true
  if (count !== undefined && count !== 'exact') throw invalidQuery(QUERY_DETAILS.count)
  if (count !== undefined) query.count = count
  return query as ListQuery
}

function failWith (detail: string): never {
  throw invalidQuery(detail)
}

/** The parameters of a detail request: `fields` and `formats`. */
export function parsePostQuery (url: string): PostQuery {
  const params = searchParamsOf(url)
  if (params === undefined) return NO_QUERY
  const fields = single(params, 'fields')
  return { ...(fields === undefined ? {} : { fields: parseFields(fields) }), ...formatsOf(params) }
}

function formatsOf (params: URLSearchParams): Pick<ListQuery, 'formats'> {
  const formats = single(params, 'formats')
  return formats === undefined ? {} : { formats: parseFormats(formats) }
}

/**
 * The query in canonical form, `?limit=…&after=…&sort=…&fields=…&tag=…&…&formats=…&count=exact` or '' for
 * none: equal queries give equal strings (cache keys, coalescing), tags percent-encoded.
 */
export function canonicalSearch (query: ListQuery): string {
  const { limit, after, sort, fields, count, formats, highlight } = query
  let search = ''
  if (limit !== undefined) search += `&limit=${limit}`
  if (after !== undefined) search += `&after=${encodeCursor(after)}`
  if (sort !== undefined) search += `&sort=${sort}`
  if (fields !== undefined) search += `&fields=${fields.join(',')}`
  search += canonicalFilter(query)
  if (highlight !== undefined) search += '&highlight=true'
  if (formats !== undefined) search += `&formats=${formats.join(',')}`
  if (count !== undefined) search += `&count=${count}`
  return search === '' ? '' : `?${search.slice(1)}`
}

/** RFC 8288: the next page, as a reference relative to this tier's own `route`, with every other parameter. */
export function nextLink (route: string, query: ListQuery, next: SortKey): string {
  return `<${route}${canonicalSearch({ ...query, after: next })}>; rel="next"`
}

/**
 * A decoded key remembers the text it came from, which is exactly what encodeCursor would make
 * of it: a page after a cursor needs that text three more times (its cache key, the keyed list's
 * line, the next link's key). Not enumerable, so a key spread into another does not carry it.
 */
const CURSOR_TEXT = Symbol('cursor text')

/**
 * The opaque cursor: base64url of JSON. In the default order the array `[publishedAt, slug]`,
 * or `[slug]` for a table without published_at; in a search's relevance order `["q", rank, slug]`;
 * in another, an object naming the sort, which no cursor of the default order can be:
 * `{"title":["Hello","hello"]}`, `{"-slug":["hello"]}`.
 */
export function encodeCursor (key: SortKey): string {
  const known = (key as Partial<Record<typeof CURSOR_TEXT, string>>)[CURSOR_TEXT]
  if (known !== undefined) return known
  const { slug, publishedAt, sort, value, rank } = key
  const json = rank !== undefined
    ? ['q', rank, slug]
    : sort !== undefined ? { [sort]: value === undefined ? [slug] : [value, slug] } : publishedAt === undefined ? [slug] : [publishedAt, slug]
  return Buffer.from(JSON.stringify(json)).toString('base64url')
}

/**
 * The sort key in a cursor, or undefined unless the text is exactly what encodeCursor makes of
 * a well-formed key: any altered byte, padding, white space or extra member makes it invalid.
 */
export function decodeCursor (text: string): SortKey | undefined {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !BASE64URL.test(text)) return undefined
  let value: unknown
  try {
    value = JSON.parse(utf8.decode(Buffer.from(text, 'base64url')))
  } catch {
    return undefined
  }
  const key = sortKeyOf(value)
  if (key === undefined || encodeCursor(key) !== text) return undefined
  Object.defineProperty(key, CURSOR_TEXT, { value: text })
  return key
}

/**
 * The `after` cursor of the `rel="next"` link in a Link header (RFC 8288), or undefined when
 * there is none; `null` when there is one whose cursor is not valid.
 */
export function nextCursorIn (header: string): SortKey | null | undefined {
  for (const [, target = '', params = ''] of header.matchAll(/<([^<>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params)
    if (!(rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).includes('next')) continue
    const question = target.indexOf('?')
    const cursor = question === -1 ? null : new URLSearchParams(target.slice(question + 1)).get('after')
    return cursor === null ? null : decodeCursor(cursor) ?? null
  }
  return undefined
}

function sortKeyOf (value: unknown): SortKey | undefined {
  if (!Array.isArray(value)) return sortedKeyOf(value)
  const [first, second, third] = value as unknown[]
  if (value.length === 3) return first === 'q' && typeof second === 'number' && Number.isFinite(second) && isCursorSlug(third) ? { slug: third, rank: second } : undefined
  if (value.length === 1) return isCursorSlug(first) ? { slug: first } : undefined
  if (value.length !== 2 || !isCursorSlug(second) || !isCursorValue(first)) return undefined
  return { slug: second, publishedAt: first }
}

/** The key of a cursor of another order than the default: `{"<sort>": [value, slug]}`, `[slug]` for a slug order. */
function sortedKeyOf (value: unknown): SortKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const entries = Object.entries(value)
  if (entries.length !== 1) return undefined
  const [[text, key]] = entries as [[string, unknown]]
  const sort = cursorSort(parseSort(text))
  if (sort === undefined || !Array.isArray(key)) return undefined
  const [first, second] = key as unknown[]
  if (sortOrder(sort).column === 'slug') return key.length === 1 && isCursorSlug(first) ? { slug: first, sort } : undefined
  return key.length === 2 && isCursorSlug(second) && isCursorValue(first) ? { slug: second, sort, value: first } : undefined
}

function isCursorValue (value: unknown): value is CursorValue {
  return value === null || (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && isStorableText(value))
}

/** The post API serves any slug a table holds, so a cursor's slug follows its rule, not the front's. */
function isCursorSlug (value: unknown): value is string {
  return typeof value === 'string' && isLookupableSlug(value)
}

function searchParamsOf (url: string): URLSearchParams | undefined {
  const question = url.indexOf('?')
  return question === -1 || question === url.length - 1 ? undefined : new URLSearchParams(url.slice(question + 1))
}

/** Names shown in a refusal: enough to find the mistake, bounded whatever the request holds. */
const MAX_NAMES_SHOWN = 10
const MAX_NAME_SHOWN = 100

/** Refuses names not in `accepted` and names given more than once, naming them. */
export function checkNames (params: URLSearchParams, accepted: readonly string[]): void {
  const seen = new Set<string>()
  const unknown = new Set<string>()
  const repeated = new Set<string>()
  for (const name of params.keys()) {
    if (!accepted.includes(name)) unknown.add(name)
    else if (seen.has(name)) repeated.add(name)
    seen.add(name)
  }
  if (unknown.size === 0 && repeated.size === 0) return
  const listed = (what: string, names: Set<string>): string[] => names.size === 0
    ? []
    : [`${what} parameter${names.size === 1 ? '' : 's'} ${[...names].slice(0, MAX_NAMES_SHOWN).map((name) => JSON.stringify(name.slice(0, MAX_NAME_SHOWN))).join(', ')}${names.size > MAX_NAMES_SHOWN ? ' and more' : ''}.`]
  throw invalidQuery([...listed('Unknown', unknown), ...listed('Repeated', repeated), `The accepted parameters are ${accepted.join(', ')}, each at most once.`].join(' '))
}

function single (params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name)
  if (values.length > 1) throw invalidQuery(`The ${name} parameter may be given only once.`)
  return values[0]
}

function parseLimit (text: string): number {
  const limit = Number(text)
  if (!LIMIT.test(text) || limit > MAX_PAGE_SIZE) throw invalidQuery(QUERY_DETAILS.limit)
  return limit
}

/**
 * The cursor of `text`, which must name `order` (cursorSort): a search's relevance order, a
 * sort's or the default order's cursor cannot resume a list in any other.
 */
function parseCursor (text: string, order: ReturnType<typeof cursorSort>): SortKey {
  const key = decodeCursor(text)
  if (key === undefined) throw invalidQuery(QUERY_DETAILS.after)
  if ((key.rank === undefined ? key.sort : RELEVANCE) !== order) throw invalidQuery(QUERY_DETAILS.afterSort)
  return key
}

function parseFields (text: string): readonly string[] {
  const names = text.split(',')
  if (names.length > MAX_FIELDS || !names.every((name) => IDENTIFIER.test(name))) throw invalidQuery(QUERY_DETAILS.fields)
  // Sorted bytewise (not localeCompare): the same names in any order are one query.
  return [...new Set([...names, 'slug'])].sort()
}
