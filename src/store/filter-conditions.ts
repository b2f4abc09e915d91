// A list's filter (tag sets, date windows) as conditions on `posts`, from the conditions each
// dialect knows how to write on the table's own columns, and the refusal of a filter the table
// cannot answer (no `tags` column, no date column to compare).
import { DATE_FILTERS, TAG_FILTERS, type ListFilter } from '../contract/list-filter.js'
import { sql, type RawBuilder } from 'kysely'
import { StoreQueryError } from './store.js'

/** "The `tags` array holds this tag": true or false, never NULL, whatever the row holds. */
export type TagCondition = (tag: string) => RawBuilder<boolean>
/** "The column's instant is after (`>`) or before (`<`) this one" (canonical UTC text); a row without one matches neither. */
export type DateCondition = (op: '>' | '<', instant: string) => RawBuilder<boolean>

export interface FilterColumns {
  /** Undefined: the table has no `tags` column this store can read tags from. */
  readonly tags: TagCondition | undefined
  readonly published_at: DateCondition | undefined
  readonly updated_at: DateCondition | undefined
}

/** Throws StoreQueryError, naming the parameter, when the table cannot answer `filter`. */
export function checkFilter (filter: ListFilter, columns: FilterColumns): void {
  for (const [key, name] of TAG_FILTERS) {
    if (filter[key] !== undefined && columns.tags === undefined) {
      throw new StoreQueryError(`The ${name} parameter needs a tags column holding a JSON array of strings, which the posts table does not have.`)
    }
  }
  for (const [key, name, column] of DATE_FILTERS) {
    if (filter[key] !== undefined && columns[column] === undefined) {
      throw new StoreQueryError(`The ${name} parameter needs a ${column} column holding dates, which the posts table does not have.`)
    }
  }
}

/** The conditions of `filter` (every one must hold), for a table checkFilter accepted it for. */
export function filterConditions (filter: ListFilter, columns: FilterColumns): Array<RawBuilder<boolean>> {
  const conditions: Array<RawBuilder<boolean>> = []
  const holds = columns.tags
  if (holds !== undefined) {
    if (filter.tag !== undefined) conditions.push(anyOf(filter.tag.map(holds)))
    for (const tag of filter.tagAll ?? []) conditions.push(holds(tag))
    if (filter.tagNot !== undefined) conditions.push(sql<boolean>`NOT ${anyOf(filter.tagNot.map(holds))}`)
  }
  for (const [key, , column, op] of DATE_FILTERS) {
    const instant = filter[key]
    const compare = columns[column]
    if (instant !== undefined && compare !== undefined) conditions.push(compare(op, instant))
  }
  return conditions
}

function anyOf (conditions: Array<RawBuilder<boolean>>): RawBuilder<boolean> {
  return sql<boolean>`(${sql.join(conditions, sql` OR `)})`
}
