// What a cursor's `published_at` may hold, per store and column type: exactly the forms the
// store's own sort key expression gives (DialectSpec.exactKey), checked before the value
// reaches a query. A cursor is client input; the store would otherwise parse it itself, and some
// of its parse errors are not ours to predict (PostgreSQL refuses `2024-01-01 00:00 Foo/Bar` with
// "time zone not recognized"). Anything outside these grammars is a 400, never a query.
import { isStorableText } from '../contract/slug.js'
import type { ColumnInfo, Dialect } from './store.js'

/** Whether a cursor's non-null `published_at` is one the store could have given for this column. */
export type SortValueCheck = (value: string | number) => boolean

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Proleptic Gregorian, `year` astronomical (1 BC is 0, a leap year). */
function isDate (year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1] as number)
}

function isTime (hour: string, minute: string, second: string): boolean {
  return Number(hour) <= 23 && Number(minute) <= 59 && Number(second) <= 59
}

/**
 * PostgreSQL's text of a timestamp, timestamptz or date in the ISO DateStyle (its default):
 * `2024-05-01 09:30:00.123456+02`, a zone of at most ±15:59:59 for timestamptz only, a ` BC`
 * suffix, within the type's range (4713 BC to 294276 AD; dates to 5874897 AD), or ±infinity.
 */
const PG_TIMESTAMP = /^(\d{4,7})-(\d\d)-(\d\d)(?: (\d\d):(\d\d):(\d\d)(?:\.\d{1,6})?(?:[+-](\d\d)(?::([0-5]\d)(?::([0-5]\d))?)?)?)?( BC)?$/

function postgresTimestamp (kind: 'timestamptz' | 'timestamp' | 'date'): SortValueCheck {
  return (value) => {
    if (typeof value !== 'string') return false
    if (value === 'infinity' || value === '-infinity') return true
    const m = PG_TIMESTAMP.exec(value)
    if (m === null) return false
    const [, y = '', mo = '', d = '', hour, minute = '', second = '', zone, , , bc] = m
    const hasTime = hour !== undefined
    if (hasTime === (kind === 'date') || (zone !== undefined) !== (kind === 'timestamptz')) return false
    if (hasTime && !isTime(hour, minute, second)) return false
    if (zone !== undefined && Number(zone) > 15) return false
    const year = Number(y)
    const max = bc !== undefined ? 4713 : kind === 'date' ? 5874897 : 294276
    if (year < 1 || year > max) return false
    // 4713 BC starts on November 24 (Julian day 0): earlier is out of range.
    if (bc !== undefined && year === 4713 && Number(mo) * 100 + Number(d) < 1124) return false
    return isDate(bc !== undefined ? 1 - year : year, Number(mo), Number(d))
  }
}

/** MySQL/MariaDB's text of a DATETIME, TIMESTAMP or DATE (CAST AS CHAR), or the zero date non-strict modes allow. */
const MYSQL_TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)(?: (\d\d):(\d\d):(\d\d)(?:\.\d{1,6})?)?$/

function mysqlTimestamp (kind: 'datetime' | 'date'): SortValueCheck {
  return (value) => {
    if (typeof value !== 'string') return false
    const m = MYSQL_TIMESTAMP.exec(value)
    if (m === null) return false
    const [, y = '', mo = '', d = '', hour, minute = '', second = ''] = m
    if ((hour !== undefined) !== (kind === 'datetime')) return false
    if (hour !== undefined && !isTime(hour, minute, second)) return false
    if (/^0000-00-00(?: 00:00:00(?:\.0+)?)?$/.test(value)) return true
    return isDate(Number(y), Number(mo), Number(d))
  }
}

/** An integer as text, from -2^(bits-1) to `max` (the column type's range). */
function integerText (bits: 16 | 32 | 64, max = 2n ** BigInt(bits - 1) - 1n): SortValueCheck {
  const min = -(2n ** BigInt(bits - 1))
  return (value) => {
    if (typeof value !== 'string' || !/^-?(?:0|[1-9]\d{0,19})$/.test(value)) return false
    const n = BigInt(value)
    return n >= min && n <= max
  }
}

/** A decimal or floating-point number as the store writes it (`1.5`, `1e+30`, `-Infinity`, `NaN`). */
const NUMBER_TEXT = /^(?:-?(?:0|[1-9]\d{0,99})(?:\.\d{1,100})?(?:e[+-]\d{1,3})?|-?Infinity|NaN)$/
const numberText: SortValueCheck = (value) => typeof value === 'string' && NUMBER_TEXT.test(value)

/** Text a text column can hold (the cursor's length already bounds it). */
const anyText: SortValueCheck = (value) => typeof value === 'string' && isStorableText(value)

const POSTGRES: Record<string, SortValueCheck> = {
  'timestamp with time zone': postgresTimestamp('timestamptz'),
  'timestamp without time zone': postgresTimestamp('timestamp'),
  date: postgresTimestamp('date'),
  smallint: integerText(16),
  integer: integerText(32),
  bigint: integerText(64),
  numeric: numberText,
  real: numberText,
  'double precision': numberText,
  text: anyText,
  'character varying': anyText,
  character: anyText,
  citext: anyText
}

const MYSQL: Record<string, SortValueCheck> = {
  datetime: mysqlTimestamp('datetime'),
  timestamp: mysqlTimestamp('datetime'),
  date: mysqlTimestamp('date'),
  // DATA_TYPE does not say whether an integer is unsigned, and MySQL compares any integer with
  // any integer column without error: the widest range, signed or not.
  ...Object.fromEntries(['tinyint', 'smallint', 'mediumint', 'int', 'bigint'].map((type) => [type, integerText(64, 2n ** 64n - 1n)])),
  decimal: numberText,
  float: numberText,
  double: numberText,
  char: anyText,
  varchar: anyText,
  tinytext: anyText,
  text: anyText,
  mediumtext: anyText,
  longtext: anyText
}

/** SQLite compares any value with any other without error; a cursor holds its text or a finite number. */
const sqliteValue: SortValueCheck = (value) => typeof value === 'number' ? Number.isFinite(value) : isStorableText(value)

/**
 * The check for `published_at` of type `column.type` on `dialect`. A column of a type not listed
 * (a domain, an interval…) takes any storable text, so that its pages still have a usable
 * `after`; a value its type cannot read is then refused by the store (a data exception on
 * PostgreSQL, DialectSpec.isInvalidKey: 400) or compared as text (MySQL).
 */
export function sortValueCheck (dialect: Dialect, column: ColumnInfo): SortValueCheck {
  if (dialect === 'sqlite') return sqliteValue
  const type = column.type ?? ''
  return (dialect === 'mysql' ? MYSQL[type] : POSTGRES[type]) ?? anyText
}
