// How many posts a list's filter keeps (`count=exact`, the X-Total-Count header): one count per
// filter and change token, shared by every page, limit and request of that filter until the
// token moves. A store without change tokens counts for every answer.
import { canonicalFilter, filterOf, type ListFilter } from '../contract/list-filter.js'

/** Filters counted per token: a flood of distinct filters evicts the oldest. */
const MAX_COUNTED_FILTERS = 1000

export interface ListCounts {
  /** The number of posts `filter` keeps, under `token` (undefined: counted now, never kept). */
  count: (filter: ListFilter, token: string | undefined) => Promise<number>
}

export function createListCounts (countPosts: (filter: ListFilter) => Promise<number>): ListCounts {
  let counted: { token: string, counts: Map<string, Promise<number>> } | undefined
  return {
    async count (query, token) {
      const filter = filterOf(query)
      if (token === undefined) return await countPosts(filter)
      if (counted?.token !== token) counted = { token, counts: new Map() }
      const { counts } = counted
      const key = canonicalFilter(filter)
      let count = counts.get(key)
      if (count === undefined) {
        if (counts.size >= MAX_COUNTED_FILTERS) counts.delete(counts.keys().next().value as string)
        count = countPosts(filter)
        counts.set(key, count)
        // A failed count is not kept: the next request counts again.
        count.catch(() => { if (counts.get(key) === count) counts.delete(key) })
      }
      return await count
    }
  }
}
