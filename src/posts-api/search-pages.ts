// A search's answer (`q`): without `sort`, in relevance order, a slice of the ranked list of its
// posts version (search-matches.ts), the page after a cursor starting past the cursor's (rank,
// slug); with `sort`, a slice of its matches in that sort (sorted-search.ts). The posts are read
// by slug with their `fields` and `formats`, and with `highlight=true` each carries its
// `search_snippet` (src/search/search-snippet.ts).
import type { ListQuery } from '../contract/list-query.js'
import { encodeCursor, type SortKey } from '../contract/cursor.js'
import { createRepresentation, etagOf, type Representation } from '../http/representation.js'
import type { SearchHit } from '../search/memory-search-index.js'
import { parseSearchQuery, type SearchQuery } from '../contract/search-query.js'
import { searchSnippet } from '../search/search-snippet.js'
import type { Post, PostStore } from '../store/store.js'
import type { SearchMatches } from './search-matches.js'
import { createSortedSearches } from './sorted-search.js'

/** The property `highlight=true` adds to each post. */
export const SNIPPET_FIELD = 'search_snippet'

export interface SearchPage {
  /** The posts, as JSON text. */
  body: Buffer
  /** The last post's key, when more follow it. */
  next: SortKey | undefined
  /** How many posts match, whatever the page. */
  total: number
}

export interface SearchPagesOptions {
  store: PostStore
  matches: SearchMatches
  /** SEARCH_LANGUAGE: the snippet marks the words the search matched, stemmed alike. */
  language: string
  /** The plain text of a column's value, for a snippet (Markdown columns are rendered); the value itself by default. */
  plainText?: (column: string, value: string) => string
}

export interface SearchPages {
  build: (query: ListQuery & { q: string }, token: string | undefined) => Promise<SearchPage>
}

const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

/**
 * Where the page after `after` starts in `hits` (most relevant first, ties by slug): at the first
 * hit past the cursor's rank and slug. Within one posts version that is the hit after the cursor's
 * own; across versions, where the cursor's post would be now.
 */
export function firstAfter (hits: readonly SearchHit[], after: SortKey): number {
  const rank = after.rank ?? Infinity
  const isAfter = (hit: SearchHit): boolean => hit.rank < rank || (hit.rank === rank && bytewise(hit.slug, after.slug) > 0)
  let low = 0
  let high = hits.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (isAfter(hits[middle] as SearchHit)) high = middle
    else low = middle + 1
  }
  return low
}

export function createSearchPages ({ store, matches, language, plainText = (_column, value) => value }: SearchPagesOptions): SearchPages {
  const sortedSearches = createSortedSearches(store)

  async function postsOf (slugs: readonly string[], query: Pick<ListQuery, 'fields' | 'formats'>): Promise<Post[]> {
    if (store.findPostsBySlugs !== undefined) return await store.findPostsBySlugs(slugs, query)
    const posts = await Promise.all(slugs.map(async (slug) => await store.findPostBySlug(slug, query)))
    return posts.filter((post) => post !== undefined)
  }

  /**
   * The snippet of the searched columns after the title (the summary, the body) as plain text;
   * of the title when they are empty, or when only the title holds a word searched for.
   */
  function snippetOf (post: Post, columns: readonly string[], search: SearchQuery): string {
    const textOf = (column: string): string => {
      const value = post[column]
      return typeof value === 'string' ? plainText(column, value) : ''
    }
    const body = columns.filter((column) => column !== 'title').map(textOf).filter((text) => text.trim() !== '').join(' ')
    const snippet = body === '' ? '' : searchSnippet(body, search, language)
    if (snippet.includes('<mark>') || !columns.includes('title')) return snippet
    const title = searchSnippet(textOf('title'), search, language)
    return title.includes('<mark>') || snippet === '' ? title : snippet
  }

  return {
    async build (query, token) {
      const hits = await matches.ranked(query, token)
      const { sort, after } = query
      const sorted = sort === undefined ? undefined : { ...query, sort }
      const listed = sorted === undefined ? undefined : await sortedSearches.list(sorted, hits, token)
      const keys: readonly SortKey[] = listed?.keys ?? hits
      let start = 0
      if (after !== undefined) start = sorted === undefined || listed === undefined ? firstAfter(hits, after) : await sortedSearches.startAfter(sorted, listed, after)
      const end = query.limit === undefined ? keys.length : Math.min(keys.length, start + query.limit)
      const page = keys.slice(start, end)
      const slugs = page.map((key) => key.slug)
      const posts = await postsOf(slugs, { ...(query.fields === undefined ? {} : { fields: query.fields }), ...(query.formats === undefined ? {} : { formats: query.formats }) })
      if (query.highlight === true && posts.length > 0) {
        const search = parseSearchQuery(query.q)
        const columns = await matches.columns()
        // Every column is there already unless `fields` trimmed them.
        const sources = query.fields === undefined ? posts : await postsOf(slugs, { fields: ['slug', ...columns] })
        const snippets = new Map(sources.map((post) => [post.slug, snippetOf(post, columns, search)]))
        for (const post of posts) post[SNIPPET_FIELD] = snippets.get(post.slug) ?? ''
      }
      const last = page.at(-1)
      // A ranked hit's key is its slug and rank; a sorted match's, its sort's cursor.
      const next = end < keys.length && last !== undefined ? (listed === undefined ? { slug: last.slug, rank: last.rank as number } : last) : undefined
      return { body: Buffer.from(`[${posts.map((post) => JSON.stringify(post)).join(',')}]`), next, total: keys.length }
    }
  }
}

/** A search page's representation: its validator covers the next link, as a list page's does. */
export function searchRepresentation ({ body, next }: SearchPage): Representation {
  return next === undefined ? createRepresentation(body) : createRepresentation(body, etagOf(body, `\n${encodeCursor(next)}`))
}
