// The keyset cursor that a list's `after` carries: where a page ends in the list order, as
// opaque text that only the service makes and reads back exactly.
import { cursorSort, parseSort, sortOrder, type ListSort } from './list-sort.js'
import { isLookupableSlug, isStorableText } from './slug.js'

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

const BASE64URL = /^[A-Za-z0-9_-]+$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

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
