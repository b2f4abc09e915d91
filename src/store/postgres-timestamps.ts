// How PostgreSQL's timestamps are served: as ISO 8601 UTC strings with milliseconds, the form
// JavaScript's Date#toISOString gives (docs/api.md, "Values").
import pg from 'pg'

/** The type OID of `timestamptz`. */
export const TIMESTAMPTZ_OID = 1184

const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number

/**
 * A timestamp as the server writes it, in UTC for a `timestamptz` when the session's TimeZone is
 * UTC (`2024-03-05 12:34:56.789123+00`), and as it is for a `timestamp`. Rewritten as text, its
 * fraction cut to milliseconds as a Date keeps it: a list of 100,000 posts holds 200,000 of them,
 * and parsing each into a Date and formatting it back took 0.8 µs. Anything else (another
 * offset, a year BC or past 9999, 'infinity') goes through the Date.
 */
const UTC_TIMESTAMPTZ = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?$/

/** A `timestamptz` as the server sent it, as ISO 8601 UTC; one without an instant ('infinity') as it is. */
export function isoTimestamptz (text: string): string {
  const parts = UTC_TIMESTAMPTZ.exec(text)
  return parts === null ? isoOfParsed(text, parseTimestamptz(text)) : isoOfParts(parts)
}

/** A `timestamp` (without time zone), read as UTC. */
export function isoTimestamp (text: string): string {
  const parts = TIMESTAMP.exec(text)
  return parts === null ? isoOfParsed(text, parseTimestamptz(`${text}Z`)) : isoOfParts(parts)
}

function isoOfParts ([, date, time, fraction = '']: RegExpExecArray): string {
  return `${date}T${time}.${fraction.padEnd(3, '0').slice(0, 3)}Z`
}

function isoOfParsed (text: string, parsed: Date | number): string {
  return parsed instanceof Date && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : text
}
