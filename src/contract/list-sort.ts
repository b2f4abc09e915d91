// The list order (`sort`): a column, `-` in front for descending, ties always by slug ascending
// (bytewise); NULLs last in both directions. The default is `-published_at`, the original order.
// A cursor says which order it belongs to (list-query.ts), so that a cursor of one order used
// with another is refused instead of answering a page from the wrong place.

/** The columns a list may be sorted by, where the table has them. */
export const SORT_COLUMNS = ['published_at', 'updated_at', 'title', 'slug'] as const
export type SortColumn = typeof SORT_COLUMNS[number]

/** A `sort` value: a column, ascending, or `-column`, descending. */
export type ListSort = SortColumn | `-${SortColumn}`

/** The original order: newest first. */
export const DEFAULT_SORT: ListSort = '-published_at'

export const SORT_DETAIL = `The sort parameter must be one of ${SORT_COLUMNS.join(', ')}, or one of them after a minus sign (descending).`

/** The column and direction of a sort. */
export function sortOrder (sort: ListSort): { column: SortColumn, descending: boolean } {
  const descending = sort.startsWith('-')
  return { column: (descending ? sort.slice(1) : sort) as SortColumn, descending }
}

/** The `sort` text as a ListSort, or undefined when it is not one. */
export function parseSort (text: string): ListSort | undefined {
  const column = text.startsWith('-') ? text.slice(1) : text
  return (SORT_COLUMNS as readonly string[]).includes(column) ? text as ListSort : undefined
}

/** The order of a search without a sort: most relevant first, its cursors `["q", rank, slug]`. */
export const RELEVANCE = 'q'

/**
 * The order a cursor must name: undefined for the default one (given or not, its cursors keep
 * their original form), RELEVANCE for a search (`searched`: with `q`) without a sort, else the
 * sort itself. A search with a sort is in that sort, and takes that sort's cursors.
 */
export function cursorSort (sort: ListSort | undefined): ListSort | undefined
export function cursorSort (sort: ListSort | undefined, searched: boolean): ListSort | typeof RELEVANCE | undefined
export function cursorSort (sort: ListSort | undefined, searched = false): ListSort | typeof RELEVANCE | undefined {
  if (sort === undefined) return searched ? RELEVANCE : undefined
  return sort === DEFAULT_SORT ? undefined : sort
}
