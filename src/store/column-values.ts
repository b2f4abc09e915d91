// One value of an imported post as the parameter its column needs, or the reason the column
// cannot hold it. Both the dry run and the real run convert every value here before anything is
// written, so a dry run that says "would insert" means the real run's statements bind the same,
// accepted values (a CHECK constraint or a trigger remains the database's own to apply).
import type { ColumnShape } from './column-shapes.js'
import type { Dialect, PostValue } from './store.js'

/** A value its column cannot hold; the message names the column, its type and the value. */
export class ColumnValueError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ColumnValueError'
  }
}

export interface ValueTarget {
  dialect: Dialect
  timestampParameter: (date: Date) => unknown
}

/**
 * The parameter to bind for `value` in `shape`'s column; a column not described (a table
 * changed since) takes the value as JSON text or as it is.
 */
export function columnParameter (target: ValueTarget, shape: ColumnShape | undefined, value: PostValue): unknown {
  if (value === null) {
    if (shape?.notNull === true) throw refused(shape, value, 'the column is NOT NULL')
    return null
  }
  switch (shape?.family) {
    case undefined:
    case 'other': return plainParameter(target, value)
    case 'json': return JSON.stringify(value instanceof Date ? value.toISOString() : value)
    case 'array': return arrayParameter(shape, value)
    case 'boolean':
      if (typeof value !== 'boolean') throw refused(shape, value, 'expected true or false')
      return value
    case 'integer': return integerParameter(target, shape, value)
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return value
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return value
      throw refused(shape, value, 'expected a number')
    case 'timestamp':
      if (value instanceof Date) return target.timestampParameter(value)
      if (typeof value === 'string') {
        const date = dateFromText(value)
        // Read as a date here, then written as `date` is: each store reads it the same way.
        if (date !== undefined) return target.timestampParameter(date)
      }
      throw refused(shape, value, 'expected a date (YYYY-MM-DD or an ISO 8601 date and time)')
    case 'text': return textParameter(shape, value)
  }
}

/** `YYYY-MM-DD`, or a date and time (a time without a zone is UTC), as an instant. */
function dateFromText (text: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(?:$|[T ]\d)/.test(text)) return undefined
  const zoned = text.length === 10 || /(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/.test(text)
  const time = Date.parse(zoned ? text : `${text}Z`)
  return Number.isNaN(time) ? undefined : new Date(time)
}

/** What a column of no known family gets: JSON text for lists and mappings. */
function plainParameter (target: ValueTarget, value: PostValue): unknown {
  if (value instanceof Date) return target.timestampParameter(value)
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  // better-sqlite3 binds no booleans; SQLite's own are 1 and 0.
  if (typeof value === 'boolean' && target.dialect === 'sqlite') return value ? 1 : 0
  return value
}

function textParameter (shape: ColumnShape, value: PostValue): string {
  const text = value instanceof Date
    ? value.toISOString()
    : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)
  const same = shape.labelsIgnoreCase === true ? (label: string) => label.toLowerCase() === text.toLowerCase() : (label: string) => label === text
  if (shape.labels !== undefined && !shape.labels.some(same)) {
    throw refused(shape, value, `expected one of ${shape.labels.map((label) => JSON.stringify(label)).join(', ')}`)
  }
  if (shape.maxLength !== undefined) {
    const length = shape.lengthInBytes === true ? Buffer.byteLength(text) : [...text].length
    if (length > shape.maxLength) throw refused(shape, value, `${length} ${shape.lengthInBytes === true ? 'bytes' : 'characters'}, more than its ${shape.maxLength}`)
  }
  return text
}

function integerParameter (target: ValueTarget, shape: ColumnShape, value: PostValue): number | string {
  // MySQL's BOOLEAN is TINYINT(1).
  if (typeof value === 'boolean' && target.dialect === 'mysql') return value ? 1 : 0
  const text = typeof value === 'number' ? (Number.isInteger(value) ? BigInt(value).toString() : '') : typeof value === 'string' ? value.trim() : ''
  if (!/^-?\d+$/.test(text)) throw refused(shape, value, 'expected a whole number')
  const [low, high] = shape.range ?? [-(2n ** 63n), 2n ** 63n - 1n]
  const n = BigInt(text)
  if (n < low || n > high) throw refused(shape, value, `out of the column's range (${low} to ${high})`)
  return typeof value === 'number' ? value : text
}

/** A PostgreSQL array: the driver writes a JavaScript array as an array literal. */
function arrayParameter (shape: ColumnShape, value: PostValue): unknown[] {
  if (!Array.isArray(value)) throw refused(shape, value, 'expected a list')
  return value.map((item) => {
    if (item === null) return null
    if (typeof item === 'object') throw refused(shape, value, 'expected a list of words or numbers')
    switch (shape.element) {
      case 'text': return String(item)
      case 'integer':
      case 'number':
        if (typeof item === 'number' || (typeof item === 'string' && item.trim() !== '' && Number.isFinite(Number(item)))) return item
        throw refused(shape, value, 'expected a list of numbers')
      case 'boolean':
        if (typeof item === 'boolean') return item
        throw refused(shape, value, 'expected a list of true or false')
      default: return item
    }
  })
}

function refused (shape: ColumnShape, value: PostValue, why: string): ColumnValueError {
  return new ColumnValueError(`column \`${shape.name}\` (${shape.type}) cannot hold ${describe(value)}: ${why}`)
}

function describe (value: PostValue): string {
  if (value instanceof Date) return value.toISOString()
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
