// A search with a sort (`q` and `sort`): its matches in that sort, paged by that sort's own
// cursors, as the list in that sort would be. The matches of one search, filters and sort are
// listed once per posts version (as their ranked list is, search-matches.ts) in the order the
// store lists them, each with its cursor: the pages of one version are slices of one list, so a
// walk never repeats nor skips a post. A cursor that is not in the list (another version's, or
// its post's sort value changed since) resumes at the first match the store lists after it.
import { canonicalSearch, type ListQuery } from '../contract/list-query.js'
import type { CursorValue, SortKey } from '../contract/cursor.js'
import { filterOf } from '../contract/list-filter.js'
import type { ListSort } from '../contract/list-sort.js'
import type { SearchHit } from '../search/memory-search-index.js'
import type { PostStore } from '../store/store.js'
import { createBuildCache, type BuildCache } from '../lib/build-cache.js'

/** Sorted lists kept per posts version, and their bytes (as KEY_BYTES a key plus its text): as for the ranked lists. */
const MAX_SORTED_LISTS = 1000
const MAX_SORTED_BYTES = 64 * 1024 * 1024
const KEY_BYTES = 160

export type SortedSearch = ListQuery & { q: string, sort: ListSort }

export interface SortedMatches {
  /** The keys of the matches, in the sort's order. */
  readonly keys: readonly SortKey[]
  /** Each match's place in `keys`, by slug. */
  readonly places: ReadonlyMap<string, number>
}

export interface SortedSearches {
  /** The matches of `query` (`hits`: its ranked list) in its sort, as of `token` or later; kept per token. */
  list: (query: SortedSearch, hits: readonly SearchHit[], token: string | undefined) => Promise<SortedMatches>
  /** Where the page after `after` starts in `matches`. */
  startAfter: (query: SortedSearch, matches: SortedMatches, after: SortKey) => Promise<number>
}

const sizeOfValue = (value: CursorValue | undefined): number => typeof value === 'string' ? value.length : 8
const sizeOf = ({ keys }: SortedMatches): number => keys.reduce((size, key) => size + KEY_BYTES + key.slug.length + sizeOfValue(key.value ?? key.publishedAt), KEY_BYTES)

/** The same place in the same order: slug and sort value alike. */
const sameKey = (a: SortKey, b: SortKey): boolean => a.slug === b.slug && a.sort === b.sort && a.value === b.value && a.publishedAt === b.publishedAt

export function createSortedSearches (store: PostStore): SortedSearches {
  let kept: { token: string, lists: BuildCache<SortedMatches> } | undefined

  /** The store's list of the search's filters in its sort, from `after` on; only slugs and keys read. */
  const listed = (query: SortedSearch, after?: SortKey): AsyncIterable<ReadonlyArray<{ key: SortKey }>> =>
    store.streamKeyedPosts({ ...filterOf(query), q: undefined, sort: query.sort, fields: ['slug'], ...(after === undefined ? {} : { after }) })

  async function build (query: SortedSearch, hits: readonly SearchHit[]): Promise<SortedMatches> {
    const matched = new Set(hits.map((hit) => hit.slug))
    const keys: SortKey[] = []
    const places = new Map<string, number>()
    for await (const batch of listed(query)) {
      for (const { key } of batch) {
        if (!matched.has(key.slug)) continue
        places.set(key.slug, keys.length)
        keys.push(key)
      }
    }
    return { keys, places }
  }

  return {
    async list (query, hits, token) {
      if (token === undefined) return await build(query, hits)
      if (kept?.token !== token) kept = { token, lists: createBuildCache({ max: MAX_SORTED_LISTS, maxBytes: MAX_SORTED_BYTES, sizeOf }) }
      return await kept.lists.get(canonicalSearch({ ...filterOf(query), sort: query.sort }), async () => await build(query, hits))
    },
    async startAfter (query, { keys, places }, after) {
      const place = places.get(after.slug)
      if (place !== undefined && sameKey(keys[place] as SortKey, after)) return place + 1
      for await (const batch of listed(query, after)) {
        for (const { key } of batch) {
          const next = places.get(key.slug)
          if (next !== undefined) return next
        }
      }
      return keys.length
    }
  }
}
