// The optional list parameters (`fields`, `limit`, `after`, `sort`, the filters of list-filter.ts,
// `highlight`, `count`, `formats`), shared by both tiers: checked
// the same way at the front (before any upstream call) and at the post API, written back in one
// canonical order (cache keys, upstream paths, Link headers); the cursor that `after` carries is
// cursor.ts's. A parameter that is not one of them, or one given twice, is refused: a typo must not
// look like it worked.
import { canonicalFilter, DATE_FILTERS, FILTER_DETAILS, parseInstant, parseTags, TAG_FILTERS, type ListFilter } from './list-filter.js'
import { FORMATS_DETAIL, parseFormats, type Format } from './formats.js'
import { decodeCursor, encodeCursor, type SortKey } from './cursor.js'
import { cursorSort, parseSort, RELEVANCE, SORT_DETAIL, type ListSort } from './list-sort.js'
import { ProblemError } from './problems.js'
import { parseSearchQuery } from './search-query.js'

/** Sent with `count=exact`: how many posts the query's filters keep, whatever its limit and cursor. */
export const TOTAL_COUNT_HEADER = 'x-total-count'

/** The most posts one page may hold. */
export const MAX_PAGE_SIZE = 1000
/** The most column names one `fields` may list. */
export const MAX_FIELDS = 100
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
  const values = checkedValues(params, LIST_PARAMETERS)
  const limit = values.get('limit')
  const after = values.get('after')
  const sortText = values.get('sort')
  const sort = sortText === undefined ? undefined : parseSort(sortText) ?? failWith(QUERY_DETAILS.sort)
  const fields = values.get('fields')
  const count = values.get('count')
  const q = values.get('q')
  const highlight = values.get('highlight')
  const query: Record<string, unknown> = {
    ...(limit === undefined ? {} : { limit: parseLimit(limit) }),
    ...(after === undefined ? {} : { after: parseCursor(after, cursorSort(sort, q !== undefined)) }),
    ...(sort === undefined ? {} : { sort }),
    ...(fields === undefined ? {} : { fields: parseFields(fields) }),
    ...formatsOf(values.get('formats'))
  }
  for (const [key, name] of TAG_FILTERS) {
    const text = values.get(name)
    if (text !== undefined) query[key] = parseTags(text) ?? failWith(FILTER_DETAILS.tags(name))
  }
  for (const [key, name] of DATE_FILTERS) {
    const text = values.get(name)
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
  return { ...(fields === undefined ? {} : { fields: parseFields(fields) }), ...formatsOf(single(params, 'formats')) }
}

function formatsOf (formats: string | undefined): Pick<ListQuery, 'formats'> {
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

/**
 * Each parameter's value, when every name is one of `accepted` and none comes twice (the common
 * case, read in one pass); otherwise checkNames refuses them all, naming them.
 */
function checkedValues (params: URLSearchParams, accepted: readonly string[]): Map<string, string> {
  const values = new Map<string, string>()
  for (const [name, value] of params) {
    if (values.has(name) || !accepted.includes(name)) {
      checkNames(params, accepted)
      break
    }
    values.set(name, value)
  }
  return values
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

/** `fields` values parsed lately, by text: a client pages with the same one again and again. */
const parsedFields = new Map<string, readonly string[]>()
/** Distinct `fields` values remembered (clients choose them): forgotten all at once past this many. */
const MAX_PARSED_FIELDS = 64

function parseFields (text: string): readonly string[] {
  const known = parsedFields.get(text)
  if (known !== undefined) return known
  const names = text.split(',')
  if (names.length > MAX_FIELDS || !names.every((name) => IDENTIFIER.test(name))) throw invalidQuery(QUERY_DETAILS.fields)
  // Sorted bytewise (not localeCompare): the same names in any order are one query.
  const fields = Object.freeze([...new Set([...names, 'slug'])].sort())
  if (parsedFields.size >= MAX_PARSED_FIELDS) parsedFields.clear()
  parsedFields.set(text, fields)
  return fields
}
