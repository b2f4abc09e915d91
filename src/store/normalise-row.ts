// One value mapping for every store; docs/api.md, "Values", describes it.
// Drivers are configured to do most of the work (pg type parsers, mysql2 typeCast, SQLite safe
// integers); this finishes it, column by column, once per row read.
import type { ColumnInfo, JsonValue, Post } from './store.js'

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** Integers beyond 2^53 stay exact as strings. */
export function bigintToJson (value: bigint): number | string {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString()
}

/** Marks a value that has no JSON form (binary columns): the property is left out. */
const OMIT = Symbol('omit')

function normaliseValue (value: unknown): JsonValue | typeof OMIT {
  if (value === null || value === undefined) return null
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) ? value : null
    case 'bigint':
      return bigintToJson(value)
    case 'object':
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
      if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return OMIT
      return value as JsonValue // parsed JSON or a PostgreSQL array
    default:
      return OMIT
  }
}

function parseJsonColumn (value: unknown): JsonValue | typeof OMIT {
  if (typeof value !== 'string') return normaliseValue(value)
  try {
    return JSON.parse(value) as JsonValue
  } catch {
    return value // a JSON column holding invalid text is passed through, not a failure
  }
}

function toBoolean (value: unknown): JsonValue | typeof OMIT {
  if (value === 0 || value === 0n) return false
  if (value === 1 || value === 1n) return true
  return normaliseValue(value)
}

/** A binary column is absent from every post, NULL or not: one shape for every row. */
const omit = (): typeof OMIT => OMIT

const READERS = { json: parseJsonColumn, boolean: toBoolean, binary: omit, value: normaliseValue } as const

export type RowNormaliser = (row: Record<string, unknown>) => Post

/** The prototype of every post: no properties, and no prototype of its own. */
const NOTHING_INHERITED: object = Object.freeze(Object.create(null))

/** Builds the row mapper for a table's columns; columns it was not told of get the generic mapping. */
export function createRowNormaliser (columns: readonly ColumnInfo[]): RowNormaliser {
  const readers = new Map(columns.filter((c) => c.kind !== 'value').map((c) => [c.name, READERS[c.kind]]))
  return (row) => {
    // Nothing inherited, not even Object.prototype's `__proto__` setter, so a column of that name
    // stays a plain property. Made from a prototype without properties rather than without a
    // prototype: V8 keeps objects without one in dictionary mode, slower to fill and to serialise.
    const post = Object.create(NOTHING_INHERITED) as Record<string, JsonValue>
    for (const key in row) {
      const value = (readers.get(key) ?? normaliseValue)(row[key])
      if (value !== OMIT) post[key] = value
    }
    return post as Post
  }
}
