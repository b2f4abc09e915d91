// Dates of the front matter (`date`, `updated`): YAML timestamps and ISO 8601 strings, checked
// strictly. `yaml`'s own timestamp tag rolls 2024-13-45 over into 2025-02-14; a typo in a date
// must fail the file instead, so dates are read here, from the text.

// YAML 1.1 timestamp forms (which Jekyll and Hugo write): a date, or a date and a time with a
// `T`, `t` or spaces between, seconds and fraction optional, then an optional zone.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:(?:[Tt]|[ \t]+)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:[ \t]*(Z|z|[+-]\d{1,2}(?::?\d{2})?))?)?$/

/**
 * The instant a front-matter date names, or undefined when it is not one. A date without a
 * time is midnight UTC, and a time without a zone is UTC (YAML's rule, and the service's for
 * timestamps stored without a zone).
 */
export function parseFrontMatterDate (value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value
  if (typeof value !== 'string') return undefined
  const match = TIMESTAMP.exec(value.trim())
  if (match === null) return undefined
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone = 'Z'] = match
  const fields = [Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)] as const
  const local = Date.UTC(...fields, Number(fraction.padEnd(3, '0').slice(0, 3)))
  const date = new Date(local - zoneOffsetMs(zone))
  // Date.UTC rolls out-of-range fields over (month 13, day 31 of April, hour 25): refuse those.
  const check = new Date(local)
  const inRange = check.getUTCFullYear() === fields[0] && check.getUTCMonth() === fields[1] && check.getUTCDate() === fields[2] &&
    check.getUTCHours() === fields[3] && check.getUTCMinutes() === fields[4] && check.getUTCSeconds() === fields[5]
  return inRange && !Number.isNaN(date.getTime()) && Math.abs(zoneOffsetMs(zone)) < 24 * 3600_000 ? date : undefined
}

function zoneOffsetMs (zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const [hours, minutes] = digits.length <= 2 ? [digits, '0'] : [digits.slice(0, -2), digits.slice(-2)]
  if (Number(minutes) > 59) return Number.NaN
  return sign * (Number(hours) * 60 + Number(minutes)) * 60_000
}
