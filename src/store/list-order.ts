// A list order (src/contract/list-sort.ts) as SQL: the ORDER BY terms, the reads that resume after
// a cursor, the expression a cursor's value is read from (and a row's key from what it read), and
// what a cursor of this order may hold. Every order ends with the slug (bytewise, ascending), and puts the posts whose sort
// column is NULL last, in both directions, on every store: they are a read of their own, after
// the others (never NULLS FIRST/LAST, which MySQL lacks, nor `OR x IS NULL`, which costs the
// index bound).
import { sql, type RawBuilder } from 'kysely'
import type { CursorValue, SortKey } from '../contract/cursor.js'
import { cursorSort, DEFAULT_SORT, sortOrder, type ListSort, type SortColumn } from '../contract/list-sort.js'
import type { SortValueCheck } from './sort-key-values.js'
import { bigintToJson } from './normalise-row.js'

/** A column the table has that a list may be sorted by. */
export interface OrderColumn {
  /** The column as the list orders and a cursor compares it (by code points for text). */
  readonly key: RawBuilder<unknown>
  /** Its value exactly as stored, as a cursor carries it. */
  readonly exact: RawBuilder<unknown>
  /** Whether a cursor's non-null value is one this column could have given. */
  readonly isValue: SortValueCheck
}

export interface ListOrder {
  readonly orderBy: ReadonlyArray<RawBuilder<unknown>>
  /** What each row's cursor value is read from; undefined when the order is the slug's alone. */
  readonly exact: RawBuilder<unknown> | undefined
  /** The reads that make up the list after `after` (from its start without), in order. */
  ranges: (after: SortKey | undefined) => Array<RawBuilder<boolean> | undefined>
  /** The reads of the posts before `key`, nearest first, each with its own order (the list's reversed). */
  before: (key: SortKey) => Array<{ range: RawBuilder<boolean>, orderBy: ReadonlyArray<RawBuilder<unknown>> }>
  /** Whether `after` is a cursor of this order whose value this table could have given. */
  accepts: (after: SortKey) => boolean
  /** The sort key of a row, from its slug and its exact value (read from `exact`). */
  keyOf: (slug: string, value: CursorValue) => SortKey
}

export interface OrderParts {
  /** The sortable columns the table has (the slug aside). */
  columns: ReadonlyMap<SortColumn, OrderColumn>
  /** The slug as lists order it (DialectSpec.slugKey). */
  slug: RawBuilder<unknown>
  /** `published_at DESC`, NULLs last (DialectSpec.newestFirst), as the default order's index has it. */
  newestFirst: RawBuilder<unknown>
}

/** The order of `sort` (undefined: the default); undefined when the table lacks its column. */
export function listOrder (sort: ListSort | undefined, { columns, slug, newestFirst }: OrderParts): ListOrder | undefined {
  const { column, descending } = sortOrder(sort ?? DEFAULT_SORT)
  const named = cursorSort(sort)
  if (column === 'slug') return slugOrder(slug, descending, named)
  const info = columns.get(column)
  // Without published_at, the original list is in slug order.
  if (info === undefined) return sort === undefined ? slugOrder(slug, false, undefined) : undefined
  const before = descending ? '<' : '>'
  const accepts = (after: SortKey): boolean => {
    const value = named === undefined ? after.publishedAt : after.value
    return after.sort === named && value !== undefined && (value === null || info.isValue(value))
  }
  const keyOf = (key: string, value: CursorValue): SortKey => named === undefined ? { slug: key, publishedAt: value } : { slug: key, sort: named, value }
  const { key } = info
  return {
    orderBy: [named === undefined ? newestFirst : descending ? sql`${key} DESC` : sql`${key} ASC`, slug],
    exact: info.exact,
    accepts,
    keyOf,
    /**
     * Each read is one range of the (key, slug) order: `a <= x AND (a < x OR (a = x AND b > y))`,
     * whose first term every store turns into an index bound (PostgreSQL takes the OR alone as a
     * filter, and reads the list from its start); then the posts without a value.
     */
    ranges (after) {
      if (after === undefined) return named === undefined ? [undefined] : [sql<boolean>`${key} IS NOT NULL`, sql<boolean>`${key} IS NULL`]
      const at = named === undefined ? after.publishedAt : after.value
      if (at === null || at === undefined) return [sql<boolean>`${key} IS NULL AND ${slug} > ${after.slug}`]
      return [
        sql<boolean>`${key} ${sql.raw(before)}= ${at} AND (${key} ${sql.raw(before)} ${at} OR (${key} = ${at} AND ${slug} > ${after.slug}))`,
        sql<boolean>`${key} IS NULL`
      ]
    },
    before (last) {
      const at = named === undefined ? last.publishedAt : last.value
      const reversed = [descending ? sql`${key} ASC` : sql`${key} DESC`, sql`${slug} DESC`]
      if (at === null || at === undefined) {
        return [
          { range: sql<boolean>`${key} IS NULL AND ${slug} < ${last.slug}`, orderBy: [sql`${slug} DESC`] },
          { range: sql<boolean>`${key} IS NOT NULL`, orderBy: reversed }
        ]
      }
      const after = descending ? '>' : '<'
      return [{ range: sql<boolean>`${key} ${sql.raw(after)}= ${at} AND (${key} ${sql.raw(after)} ${at} OR (${key} = ${at} AND ${slug} < ${last.slug}))`, orderBy: reversed }]
    }
  }
}

function slugOrder (slug: RawBuilder<unknown>, descending: boolean, named: ListSort | undefined): ListOrder {
  return {
    orderBy: [descending ? sql`${slug} DESC` : slug],
    exact: undefined,
    accepts: (after) => after.sort === named && after.publishedAt === undefined && after.value === undefined,
    keyOf: (key) => named === undefined ? { slug: key } : { slug: key, sort: named },
    ranges: (after) => [after === undefined ? undefined : sql<boolean>`${slug} ${sql.raw(descending ? '<' : '>')} ${after.slug}`],
    before: (last) => [{ range: sql<boolean>`${slug} ${sql.raw(descending ? '>' : '<')} ${last.slug}`, orderBy: [descending ? slug : sql`${slug} DESC`] }]
  }
}

/** The alias under which a read takes each row's exact sort value (removed before serving). */
export const SORT_KEY = 'blog_read_api_sort_key'

/** The sort key of a row read with its exact sort value (as SORT_KEY). */
export function sortKeyOf (order: ListOrder, row: Record<string, unknown>): SortKey {
  const slug = row.slug as string
  return order.keyOf(slug, order.exact === undefined ? null : cursorValueOf(row[SORT_KEY]))
}

function cursorValueOf (at: unknown): CursorValue {
  if (at === null || typeof at === 'string') return at
  if (typeof at === 'bigint') return bigintToJson(at)
  if (typeof at === 'number' && Number.isFinite(at)) return at
  // SQLite only (the others read it as text): a real that JSON cannot hold, or a blob.
  throw new Error(`cannot page past a sort value of type ${typeof at}`)
}

export function withoutSortKey (row: Record<string, unknown>): Record<string, unknown> {
  delete row[SORT_KEY]
  return row
}
