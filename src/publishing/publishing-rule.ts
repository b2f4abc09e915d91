// The publishing rule as SQL, one condition per dialect: which rows of `posts` the public may see
// at an instant. Every public read (list, detail, pages, keyed lists, and whatever later reads
// the store: search, feeds, sync) applies it in the query itself, never as a filter over answers,
// so a hidden row costs no bytes and no page ever comes out short.
//
// A row is hidden when the table has the column and: `published_at` is NULL or later than now;
// `draft` is true; `published` is false; `status` is not `published` (case-insensitive);
// `deleted_at` is not NULL. Each term is written so that it is never NULL (a NULL would make
// NOT (rule) NULL too, and a row counted neither hidden nor shown).
import { sql, type RawBuilder } from 'kysely'
import type { ColumnInfo, Dialect } from '../store/store.js'

/** The columns that decide, in the order the start-up log names them. */
export const DECIDING_COLUMNS = ['published_at', 'draft', 'published', 'status', 'deleted_at'] as const

/** Values read as true (`draft`) and as false (`published`), whatever the column's type: lower-cased text. */
const TRUE_TEXTS = ['true', 't', '1', 'yes', 'y', 'on']
const FALSE_TEXTS = ['false', 'f', '0', 'no', 'n', 'off']

export interface PublishingRule {
  /** The deciding columns this table has, in DECIDING_COLUMNS order (empty: every row is public). */
  readonly columns: readonly string[]
  /** The row is public at `nowMs` (ms since the epoch). */
  visible: (nowMs: number) => RawBuilder<boolean>
  /**
   * The row is hidden at `nowMs` by its `published_at` alone, and will be public once that instant
   * passes (the other terms hold). Undefined when the table has no `published_at`.
   */
  scheduled: ((nowMs: number) => RawBuilder<boolean>) | undefined
  /** A row's `published_at` as whole ms since the epoch (NULL when it is none): what the schedule reads. */
  readonly instantMs: RawBuilder<number | null> | undefined
}

/** How a dialect writes the rule's pieces. */
interface DialectTerms {
  /** The column as lower-case text (any type). */
  lowerText: (column: RawBuilder<unknown>, info: ColumnInfo) => RawBuilder<string>
  /** `published_at <= now` (never NULL), for the column's type. */
  publishedBy: (info: ColumnInfo, nowMs: number) => RawBuilder<boolean>
  /** `published_at > now` (never NULL). */
  publishedAfter: (info: ColumnInfo, nowMs: number) => RawBuilder<boolean>
  instantMs: (info: ColumnInfo) => RawBuilder<number | null>
}

const isoOf = (nowMs: number): string => new Date(nowMs).toISOString()

/**
 * SQLite keeps whatever it was given: ISO 8601 text (any zone suffix), or a number of seconds since
 * the epoch. Both become whole milliseconds, compared with now's; text SQLite cannot read as a
 * time is NULL, so hidden.
 */
const sqliteInstant = sql<number | null>`(CASE typeof(published_at)
  WHEN 'text' THEN CAST(round((julianday(published_at) - 2440587.5) * 86400000.0) AS INTEGER)
  WHEN 'integer' THEN published_at * 1000 WHEN 'real' THEN CAST(round(published_at * 1000.0) AS INTEGER) END)`

const SQLITE: DialectTerms = {
  lowerText: (column) => sql<string>`lower(${column})`,
  publishedBy: (_info, nowMs) => sql<boolean>`COALESCE(${sqliteInstant} <= ${nowMs}, 0)`,
  publishedAfter: (_info, nowMs) => sql<boolean>`COALESCE(${sqliteInstant} > ${nowMs}, 0)`,
  instantMs: () => sqliteInstant
}

/** PostgreSQL: time types compare natively; `timestamp` without zone is UTC. */
function postgresNow ({ type = '' }: ColumnInfo, nowMs: number): RawBuilder<unknown> {
  if (type === 'timestamp with time zone') return sql`${isoOf(nowMs)}::timestamptz`
  if (type === 'timestamp without time zone') return sql`(${isoOf(nowMs)}::timestamptz AT TIME ZONE 'UTC')`
  if (type === 'date') return sql`(${isoOf(nowMs)}::timestamptz AT TIME ZONE 'UTC')::date`
  throw new Error(`unreachable: published_at of type ${type}`)
}

// `published_at IS NOT NULL` rather than COALESCE(…, false) keeps the terms never NULL: the
// planner reads a bare comparison with the column's statistics, and the index serves it. Behind
// COALESCE it guessed a third of the rows, and sorted the whole table for a list instead of
// reading the index in order (the first byte of a 100,000-post list after 0.5 s instead of at once).
const POSTGRES: DialectTerms = {
  lowerText: (column) => sql<string>`lower(${column}::text)`,
  publishedBy: (info, nowMs) => sql<boolean>`(published_at <= ${postgresNow(info, nowMs)} AND published_at IS NOT NULL)`,
  publishedAfter: (info, nowMs) => sql<boolean>`(published_at > ${postgresNow(info, nowMs)} AND published_at IS NOT NULL)`,
  instantMs: () => sql<number | null>`floor(extract(epoch from published_at) * 1000)::bigint`
}

/** MySQL/MariaDB: date and time types compare natively (the session is UTC); text is read as a DATETIME (NULL, so hidden, when it is not one). */
const MYSQL_TIME_TYPES = new Set(['datetime', 'timestamp', 'date'])
// MariaDB casts text that is no time to a zero date rather than NULL: only text that starts as a date is cast.
const mysqlColumn = ({ type = '' }: ColumnInfo): RawBuilder<unknown> => MYSQL_TIME_TYPES.has(type)
  ? sql`published_at`
  : sql`(CASE WHEN CAST(published_at AS CHAR) REGEXP '^[0-9]{4}-[0-9]{2}-[0-9]{2}' THEN CAST(published_at AS DATETIME(6)) END)`

const MYSQL: DialectTerms = {
  lowerText: (column) => sql<string>`LOWER(CAST(${column} AS CHAR))`,
  publishedBy: (info, nowMs) => sql<boolean>`COALESCE(${mysqlColumn(info)} <= ${new Date(nowMs)}, FALSE)`,
  publishedAfter: (info, nowMs) => sql<boolean>`COALESCE(${mysqlColumn(info)} > ${new Date(nowMs)}, FALSE)`,
  instantMs: (info) => sql<number | null>`CAST(FLOOR(UNIX_TIMESTAMP(${mysqlColumn(info)}) * 1000) AS SIGNED)`
}

const TERMS: Record<Dialect, DialectTerms> = { sqlite: SQLITE, postgres: POSTGRES, mysql: MYSQL }

/** PostgreSQL types whose `published_at` the rule can compare with now. */
const POSTGRES_TIME_TYPES = new Set(['timestamp with time zone', 'timestamp without time zone', 'date'])

/**
 * Why this table's `published_at` cannot decide (PostgreSQL: a type that is not a date or a
 * timestamp, since casting text would fail the whole query on one bad row), or undefined.
 */
export function unsupportedPublishedAt (dialect: Dialect, columns: readonly ColumnInfo[]): string | undefined {
  const column = columns.find((c) => c.name === 'published_at')
  if (dialect !== 'postgres' || column === undefined || POSTGRES_TIME_TYPES.has(column.type ?? '')) return undefined
  return `published_at is of type ${column.type ?? 'unknown'}; the publishing rule needs a date or timestamp column`
}

const listOf = (texts: readonly string[]): RawBuilder<unknown> => sql.join(texts.map((text) => sql.lit(text)))

export function createPublishingRule (dialect: Dialect, columns: readonly ColumnInfo[]): PublishingRule {
  const terms = TERMS[dialect]
  const byName = new Map(columns.map((c) => [c.name, c]))
  const present = DECIDING_COLUMNS.filter((name) => byName.has(name))
  const lower = (name: string): RawBuilder<string> => terms.lowerText(sql.ref(name), byName.get(name) as ColumnInfo)
  const isBoolean = (name: string): boolean => dialect === 'postgres' && byName.get(name)?.type === 'boolean'

  /** Every term but time's: a draft or a deleted row stays hidden whatever its date. */
  const timeless: Array<RawBuilder<boolean>> = []
  if (byName.has('draft')) {
    timeless.push(isBoolean('draft') ? sql<boolean>`draft IS NOT TRUE` : sql<boolean>`COALESCE(${lower('draft')}, '') NOT IN (${listOf(TRUE_TEXTS)})`)
  }
  if (byName.has('published')) {
    timeless.push(isBoolean('published') ? sql<boolean>`published IS NOT FALSE` : sql<boolean>`COALESCE(${lower('published')}, '') NOT IN (${listOf(FALSE_TEXTS)})`)
  }
  if (byName.has('status')) timeless.push(sql<boolean>`COALESCE(${lower('status')}, '') = 'published'`)
  if (byName.has('deleted_at')) timeless.push(sql<boolean>`deleted_at IS NULL`)

  const publishedAt = byName.get('published_at')
  const all = (conditions: Array<RawBuilder<boolean>>): RawBuilder<boolean> =>
    conditions.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`(${sql.join(conditions, sql` AND `)})`
  return {
    columns: present,
    visible: (nowMs) => all(publishedAt === undefined ? timeless : [terms.publishedBy(publishedAt, nowMs), ...timeless]),
    scheduled: publishedAt === undefined ? undefined : (nowMs) => all([terms.publishedAfter(publishedAt, nowMs), ...timeless]),
    instantMs: publishedAt === undefined ? undefined : terms.instantMs(publishedAt)
  }
}
