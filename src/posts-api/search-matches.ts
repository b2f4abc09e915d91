// Which posts a search matches, most relevant first: from the store's own index when `migrate
// --search` made one for the searched columns, else from an in-memory FTS5 index the post API
// fills from the rows it reads (src/search/memory-search-index.ts). Both are exact: the in-memory
// index is brought to each new posts version before it answers (the changed rows replaced,
// the removed ones dropped), and every ranked list is kept for its version only, so the pages of
// one search under one version are slices of one list: a walk never repeats nor skips a post.
import { createHash } from 'node:crypto'
import { canonicalFilter, filterOf, type ListFilter } from '../contract/list-filter.js'
import { checkSearchSettings, type SearchSettings } from '../search/compiled-search.js'
import { openMemorySearchIndex, type MemorySearchIndex, type SearchHit, type SearchRow } from '../search/memory-search-index.js'
import { parseSearchQuery } from '../contract/search-query.js'
import { StoreQueryError, type PostStore, type StoreSearch } from '../store/store.js'
import { createBuildCache, type BuildCache } from '../lib/build-cache.js'

/** Ranked lists kept per posts version: every distinct search and filter is one, so a flood of them evicts the oldest. */
const MAX_RANKED_LISTS = 1000
/**
 * And their bytes, counted as HIT_BYTES a hit (an object, its slug, its number): a flood of
 * searches for common words (10,000 hits each) must not hold 1,000 lists of them.
 */
const MAX_RANKED_BYTES = 64 * 1024 * 1024
const HIT_BYTES = 120

export interface SearchMatches {
  /**
   * Every post matching `filter` (its `q` and the rest), most relevant first, ties by slug
   * (bytewise), as of `token` or later; one ranked list per filter and token (none kept without one).
   */
  ranked: (filter: ListFilter & { q: string }, token: string | undefined) => Promise<readonly SearchHit[]>
  /** The searched columns the table has (known after the first search or `describe`). */
  columns: () => Promise<readonly string[]>
  /** Which way search runs, for the start-up log. */
  describe: () => Promise<string>
  close: () => void
}

type Engine = { kind: 'store', search: StoreSearch, columns: readonly string[] } | { kind: 'memory', columns: readonly string[] }

export function createSearchMatches (store: PostStore, settings: SearchSettings): SearchMatches {
  let engine: Promise<Engine> | undefined
  let memory: InMemory | undefined
  let kept: { token: string, lists: BuildCache<readonly SearchHit[]> } | undefined

  /** Found once; a store failure meanwhile is not kept (the next search asks again). */
  function engineOf (): Promise<Engine> {
    if (engine === undefined) {
      const finding = (async (): Promise<Engine> => {
        const columns = settings.columns.filter((column) => store.columns.includes(column))
        if (columns.length === 0) return { kind: 'memory', columns }
        const search = await store.openSearchIndex?.(checkSearchSettings({ ...settings, columns }))
        return search === undefined ? { kind: 'memory', columns } : { kind: 'store', search, columns }
      })()
      engine = finding
      finding.catch(() => { if (engine === finding) engine = undefined })
    }
    return engine
  }

  async function rank (filter: ListFilter & { q: string }, token: string | undefined): Promise<readonly SearchHit[]> {
    const found = await engineOf()
    if (found.columns.length === 0) throw new StoreQueryError(`The q parameter needs a column to search: the posts table has none of ${settings.columns.join(', ')} (SEARCH_COLUMNS).`)
    const query = parseSearchQuery(filter.q)
    const others = { ...filterOf(filter), q: undefined }
    if (found.kind === 'store') return await found.search.rankMatches(query, others)
    memory ??= createInMemory(store, { ...settings, columns: found.columns })
    const hits = await memory.search(query, token)
    // The index holds every post the list may show; the other filters keep some of them.
    if (canonicalFilter(others) === '') return hits
    const kept = new Set<string>()
    for await (const posts of store.streamPosts({ ...others, fields: ['slug'] })) for (const post of posts) kept.add(post.slug)
    return hits.filter((hit) => kept.has(hit.slug))
  }

  return {
    async ranked (filter, token) {
      if (token === undefined) return await rank(filter, token)
      if (kept?.token !== token) {
        kept = { token, lists: createBuildCache({ max: MAX_RANKED_LISTS, maxBytes: MAX_RANKED_BYTES, sizeOf: (hits) => (hits.length + 1) * HIT_BYTES }) }
      }
      // Concurrent requests share one ranking; a failed one is not kept.
      return await kept.lists.get(canonicalFilter(filterOf(filter)), async () => await rank(filter, token))
    },
    columns: async () => (await engineOf()).columns,
    async describe () {
      const found = await engineOf()
      if (found.columns.length === 0) return `search (q) is off: the posts table has none of the columns SEARCH_COLUMNS names (${settings.columns.join(', ')})`
      if (found.kind === 'store') return `search (q) runs on ${found.search.name} (columns ${found.columns.join(', ')})`
      if (!store.tracksChanges) {
        return `search (q) runs on an in-memory index of ${found.columns.join(', ')} brought up to date by reading those columns of every post for each search, ` +
          'since this store has no posts version: run `migrate --search` for the store\'s own index'
      }
      return `search (q) runs on an in-memory index of ${found.columns.join(', ')} that this process fills at the first search and keeps by the posts version (\`migrate --search\` makes the store's own)`
    },
    close: () => memory?.close()
  }
}

interface InMemory {
  /** The hits of `query` in the index brought to `token` (or later); without a token, to the rows read now. */
  search: (query: ReturnType<typeof parseSearchQuery>, token: string | undefined) => Promise<SearchHit[]>
  close: () => void
}

/**
 * The in-memory index, and the rows it holds (their searched columns), kept so that a new version
 * costs one read of those columns and the work of the rows that changed. Updates run one at a
 * time, in the order asked.
 */
function createInMemory (store: PostStore, settings: SearchSettings): InMemory {
  const index: MemorySearchIndex = openMemorySearchIndex(settings)
  const { columns } = settings
  /** The digest of each row the index holds. */
  const held = new Map<string, string>()
  /** The token the index is at; undefined: not known (never filled, or a store without tokens). */
  let at: string | undefined
  let updating: Promise<void> = Promise.resolve()

  /**
   * A digest of a row's searched columns, to compare with what the index holds (a copy of the
   * text would double the memory): each value with its length first, so none can pass for another.
   */
  const textOf = (row: SearchRow): string => {
    const hash = createHash('sha256')
    for (const column of columns) {
      const value = row[column]
      const text = value === null || value === undefined ? '' : String(value)
      hash.update(`${value === null || value === undefined ? '-' : text.length}:${text}`)
    }
    return hash.digest('base64url')
  }

  async function update (): Promise<void> {
    const upserted: Array<{ row: SearchRow, text: string }> = []
    const seen = new Set<string>()
    for await (const posts of store.streamPosts({ fields: ['slug', ...columns] })) {
      for (const post of posts) {
        const text = textOf(post)
        seen.add(post.slug)
        if (held.get(post.slug) !== text) upserted.push({ row: post, text })
      }
    }
    const deleted = [...held.keys()].filter((slug) => !seen.has(slug))
    if (upserted.length === 0 && deleted.length === 0) return
    // Only once every row is read: a read that fails leaves the index and `held` as they were.
    index.apply({ upserted: upserted.map(({ row }) => row), deleted })
    for (const { row, text } of upserted) held.set(row.slug, text)
    for (const slug of deleted) held.delete(slug)
  }

  return {
    async search (query, token) {
      if (token === undefined || token !== at) {
        const next = updating.then(async () => {
          if (token !== undefined && token === at) return
          await update()
          at = token
        })
        // A failed update is retried by the next search; the index holds what it applied.
        updating = next.catch(() => { at = undefined })
        await next
      }
      return index.search(query)
    },
    close: () => index.close()
  }
}

/** Which way search runs on `store` with `settings`, for the start-up log (as the post API's own SearchMatches will find it). */
export async function describeSearch (store: PostStore, settings: SearchSettings): Promise<string> {
  const matches = createSearchMatches(store, settings)
  try {
    return await matches.describe()
  } finally {
    matches.close()
  }
}
