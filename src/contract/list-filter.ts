// Which posts a list holds: the tag sets (`tag` any of, `tag_all`, `tag_not`), the date windows
// (`published_after`, `published_before`, `updated_after`) and the full-text search (`q`). Parsed the same way at both tiers, written
// back in one canonical form (equal filters give equal text), and described in words for the 404
// of a filter that matches nothing.
import { isStorableText } from './slug.js'

export interface ListFilter {
  /** Posts whose `tags` hold any of these (distinct, sorted bytewise). */
  readonly tag?: readonly string[]
  /** Posts whose `tags` hold every one of these. */
  readonly tagAll?: readonly string[]
  /** Posts whose `tags` hold none of these. */
  readonly tagNot?: readonly string[]
  /** Posts published strictly after this instant (canonical UTC text, see parseInstant). */
  readonly publishedAfter?: string
  /** Posts published strictly before this instant. */
  readonly publishedBefore?: string
  /** Posts updated strictly after this instant. */
  readonly updatedAfter?: string
  /** Posts matching this search (src/contract/search-query.ts), as given: its text is its canonical form. */
  readonly q?: string
}

export type TagFilterKey = 'tag' | 'tagAll' | 'tagNot'
export type DateFilterKey = 'publishedAfter' | 'publishedBefore' | 'updatedAfter'

/** Each filter's parameter name, in canonical order. */
export const TAG_FILTERS: ReadonlyArray<readonly [TagFilterKey, string]> = [['tag', 'tag'], ['tagAll', 'tag_all'], ['tagNot', 'tag_not']]
export const DATE_FILTERS: ReadonlyArray<readonly [DateFilterKey, string, 'published_at' | 'updated_at', '>' | '<']> = [
  ['publishedAfter', 'published_after', 'published_at', '>'],
  ['publishedBefore', 'published_before', 'published_at', '<'],
  ['updatedAfter', 'updated_after', 'updated_at', '>']
]

/** The longest tag, in characters. */
export const MAX_TAG_LENGTH = 100
/** The most tags one parameter may list. */
export const MAX_TAGS = 20

export const FILTER_DETAILS = {
  tags: (parameter: string) => `The ${parameter} parameter must list 1 to ${MAX_TAGS} tags separated by commas, each 1 to ${MAX_TAG_LENGTH} characters without a comma or control character.`,
  date: (parameter: string) => `The ${parameter} parameter must be an RFC 3339 timestamp (2024-05-01T09:30:00Z, 2024-05-01T11:30:00.5%2B02:00 with its plus sign percent-encoded) or a date (2024-05-01, its start in UTC).`
} as const

// A control character (C0, DEL, C1) or a comma.
// eslint-disable-next-line no-control-regex
const NOT_IN_TAG = /[\u0000-\u001f\u007f-\u009f,]/

/** The tags of a `tag`, `tag_all` or `tag_not` value, distinct and sorted bytewise; undefined when malformed. */
export function parseTags (text: string): readonly string[] | undefined {
  const tags = text.split(',')
  if (tags.length > MAX_TAGS) return undefined
  for (const tag of tags) {
    if (tag.length === 0 || [...tag].length > MAX_TAG_LENGTH || NOT_IN_TAG.test(tag) || !isStorableText(tag)) return undefined
  }
  return [...new Set(tags)].sort(bytewise)
}

function bytewise (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)(?:[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d\d):(\d\d)))?$/
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * An RFC 3339 timestamp, or a date (its start in UTC), as the instant in UTC:
 * `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the fraction as given without trailing zeros (so a bound
 * keeps microseconds); undefined when malformed or not a real date and time (no leap second).
 */
export function parseInstant (text: string): string | undefined {
  const m = RFC3339.exec(text)
  if (m === null) return undefined
  const [, y = '', mo = '', d = '', hh, mi = '0', ss = '0', fraction = '', z, sign, oh = '0', om = '0'] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1] as number)) return undefined
  if (hh !== undefined && (Number(hh) > 23 || Number(mi) > 59 || Number(ss) > 59 || Number(oh) > 23 || Number(om) > 59)) return undefined
  const offsetMinutes = z !== undefined || sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om))
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(Number(hh ?? 0), Number(mi) - offsetMinutes, Number(ss), 0)
  const iso = date.toISOString()
  // An offset may move the instant outside years 0000 to 9999, which ISO text would then write with a sign.
  if (iso.length !== 24) return undefined
  const digits = fraction.replace(/0+$/, '')
  return `${iso.slice(0, 19)}${digits === '' ? '' : `.${digits}`}Z`
}

/** The filter as query text, `&tag=…&tag_all=…` ('' for none), each value percent-encoded but for its commas. */
export function canonicalFilter (filter: ListFilter): string {
  let search = ''
  for (const [key, name] of TAG_FILTERS) {
    const tags = filter[key]
    if (tags !== undefined) search += `&${name}=${tags.map(encodeURIComponent).join(',')}`
  }
  for (const [key, name] of DATE_FILTERS) {
    const instant = filter[key]
    if (instant !== undefined) search += `&${name}=${instant}`
  }
  if (filter.q !== undefined) search += `&q=${encodeURIComponent(filter.q)}`
  return search
}

/** The filter in words for a person (`tag=rust and published_after=2024-05-01T00:00:00Z`), or undefined for none. */
export function describeFilter (filter: ListFilter): string | undefined {
  const parts: string[] = []
  for (const [key, name] of TAG_FILTERS) {
    const tags = filter[key]
    if (tags !== undefined) parts.push(`${name}=${tags.join(',')}`)
  }
  for (const [key, name] of DATE_FILTERS) {
    const instant = filter[key]
    if (instant !== undefined) parts.push(`${name}=${instant}`)
  }
  if (filter.q !== undefined) parts.push(`q=${filter.q}`)
  return parts.length === 0 ? undefined : parts.join(' and ')
}

/** Only the filter of a query. */
export function filterOf (query: ListFilter): ListFilter {
  const filter: Record<string, unknown> = {}
  for (const [key] of [...TAG_FILTERS, ...DATE_FILTERS]) {
    if (query[key] !== undefined) filter[key] = query[key]
  }
  if (query.q !== undefined) filter.q = query.q
  return filter as ListFilter
}
