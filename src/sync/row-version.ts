// A row's version computed in the post API: a digest of the row as it serves it, so a version
// moves exactly when what a client would receive does, and every process computes the same
// version for the same row. PostgreSQL's rows whose `xmin` moved are digested here
// (src/store/stamped-row-versions.ts), and so is every row of a view or engine that answers no
// `xmin`; SQLite and MySQL/MariaDB digest theirs in the query (src/store/row-versions.ts).
import { createHash } from 'node:crypto'

// 96 bits: a collision would hide one edit of one post, and needs some 2^48 versions of it.
const VERSION_BYTES = 12

/** The version of `row`, a JSON object as the post API serves it: 16 base64url characters. */
export function rowVersion (row: Readonly<Record<string, unknown>>): string {
  return createHash('sha256').update(canonicalForm(row)).digest().subarray(0, VERSION_BYTES).toString('base64url')
}

const isWellFormed = (text: string): boolean => (text as string & { isWellFormed: () => boolean }).isWellFormed()

/**
 * `value` (a JSON value) written so that equal values give the same text and different values
 * different texts: object keys in code-unit order at every depth (the order a driver hands
 * columns or JSON keys over in does not matter), each string prefixed with its length, each
 * array and object with its size, so no value can pass for another. Not JSON: escaping a
 * 600-word Markdown post for JSON took more time than hashing it. What JSON.stringify leaves out
 * (undefined properties) or rewrites (`toJSON`, non-finite numbers as null) is treated the same.
 */
export function canonicalForm (value: unknown): string {
  if (typeof value === 'string') {
    // A lone surrogate would be hashed as U+FFFD, like any other: such strings are escaped.
    return isWellFormed(value) ? `s${value.length}:${value}` : `j${JSON.stringify(value)}`
  }
  if (typeof value !== 'object' || value === null) return `${JSON.stringify(value) ?? 'null'};`
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return canonicalForm((value as { toJSON: () => unknown }).toJSON())
  if (Array.isArray(value)) return `a${value.length}:${value.map(canonicalForm).join('')}`
  const object = value as Record<string, unknown>
  const keys = Object.keys(object).filter((key) => object[key] !== undefined).sort()
  let text = `o${keys.length}:`
  for (const key of keys) text += canonicalForm(key) + canonicalForm(object[key])
  return text
}
