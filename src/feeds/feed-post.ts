// Posts as the post API serves them (rows with `formats=html,text`), made
// into what the feed and sitemap writers take. A property of the wrong type counts as absent, so
// a table with an unusual `author` or `tags` column still makes a valid feed.
import type { FeedPost } from './feed.js'

/**
 * The post's summary from its `summary` column and its text, by the rule of the computed
 * `excerpt` (the column when not blank, else the start of the text), which the front passes in:
 * this folder knows no renderer.
 */
export type Excerpt = (text: string, summary: unknown) => string

/**
 * A post row's feed entry; `markdownColumn` names the column whose `_html` and `_text` it shows.
 * Its summary is `excerpt` of the row's text and `summary`; without a text, the `summary` column.
 */
export function feedPostFromRow (row: Readonly<Record<string, unknown>>, markdownColumn = 'content', excerpt?: Excerpt): FeedPost {
  const text = stringOrNull(row[`${markdownColumn}_text`])
  return {
    slug: String(row.slug),
    title: stringOrNull(row.title),
    summary: text === null || excerpt === undefined ? stringOrNull(row.summary) : excerpt(text, row.summary),
    html: stringOrNull(row[`${markdownColumn}_html`]),
    text,
    author: stringOrNull(row.author),
    tags: Array.isArray(row.tags) ? row.tags.filter((tag): tag is string => typeof tag === 'string') : null,
    publishedAt: parseTimestamp(row.published_at) ?? null,
    updatedAt: parseTimestamp(row.updated_at) ?? null
  }
}

function stringOrNull (value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

// ISO 8601 as the stores serve timestamps, and SQLite's text forms (`2024-05-01 10:00:00`), which
// are passed through as stored: a date, optionally a time (`T` or a space between), fraction and
// zone. Without a zone the time is UTC, the rule for every timestamp stored without one.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(Z|z|[+-]\d{2}:?\d{2})?$/

/** The instant a timestamp names, or undefined when it is not one (out-of-range fields included). */
export function parseTimestamp (value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value
  if (typeof value !== 'string') return undefined
  const match = TIMESTAMP.exec(value.trim())
  if (match === null) return undefined
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysIn(Number(year), Number(month))) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`)
  return Number.isNaN(date.getTime()) ? undefined : date
}

function daysIn (year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}
