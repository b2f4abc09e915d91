// The keyed list, which both tiers share: every post of one list shape (its `fields`, `sort`, filter and `formats`),
// in list order, each on a line after the cursor that resumes after it: `<cursor> <post JSON>`.
// The post API serves it at KEYED_LIST_PATH, labelled with its posts version. A front that
// holds it answers any page of that shape from memory: the page after a cursor is the
// lines after that cursor's line, and its next link carries its last line's cursor, the very
// bytes the post API would have answered. Only the front can tell whether holding a shape is
// worth it; the post API reads the store for it as for any list.
import { filterOf, type ListFilter } from './list-filter.js'
import { canonicalSearch, type ListQuery } from './list-query.js'

export const KEYED_LIST_PATH = '/api/posts/keyed'
export const KEYED_LIST_CONTENT_TYPE = 'text/plain; charset=utf-8'

/** What a keyed list depends on: its fields, order, filter and formats (a page's limit and cursor are read from it; a count is not in it). */
export type ListShape = Pick<ListQuery, 'fields' | 'sort' | 'formats'> & ListFilter

export function shapeOf (query: ListQuery): ListShape {
  return {
    ...(query.fields === undefined ? {} : { fields: query.fields }),
    ...(query.sort === undefined ? {} : { sort: query.sort }),
    ...filterOf(query),
    ...(query.formats === undefined ? {} : { formats: query.formats })
  }
}

/** The keyed list's path for `shape`, parameters in canonical order. */
export function keyedListPath (shape: ListShape): string {
  return KEYED_LIST_PATH + canonicalSearch(shape)
}
