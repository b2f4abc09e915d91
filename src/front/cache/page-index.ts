// Pages from memory (issue 10). A page after a random cursor is nearly always one nobody asked for
// before, so a cache of pages cannot answer it, and each would cost an upstream call and a store
// read. For a list shape (its fields and tag) that clients page through often, the front holds
// its keyed list instead (src/contract/keyed-list.ts): every post of the shape, in list order, after its
// cursor. The page after a cursor is then the posts after that cursor's line, with the same
// bytes, Link and ETag as the post API's page, and a hit costs what a cached post costs: it is
// confirmed by the list's posts version like any copy (upstream-cache.ts). A cursor the list
// does not hold (its post was deleted or moved, or it is not one of ours) is left to the upstream.
import { decodeCursor, type SortKey } from '../../contract/list-query.js'
import { createRepresentation, etagOf, type Representation } from '../../http/representation.js'

/** A page, as the cache hands one over. */
export interface IndexedPage {
  representation: Representation
  empty: boolean
  next?: SortKey
}

export interface PageIndex {
  /** Bytes of the keyed list it was built from. */
  readonly bytes: number
  /** The page of at most `limit` posts after `after` (from the start without), or undefined when the list does not hold that cursor. */
  page: (after: string | undefined, limit: number) => IndexedPage | undefined
}

const LINE_END = 0x0a
const SPACE = 0x20
/** Lines parsed between two turns of the event loop while an index is built. */
const LINES_PER_TURN = 2000

/** A line's post: an object with a string `slug` (the rest is the upstream's to decide). */
function isPostJson (text: string): boolean {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { slug?: unknown }).slug === 'string'
  } catch {
    return false
  }
}

/**
 * The index of a keyed list, or undefined when a line is not `<cursor> <post JSON>`. Built a
 * slice of lines at a time, giving the event loop back in between: 100,000 posts take a few
 * hundred milliseconds, which requests must not wait behind.
 */
export async function buildPageIndex (keyedList: Buffer): Promise<PageIndex | undefined> {
  const cursors: string[] = []
  const posts: string[] = []
  const positions = new Map<string, number>()
  let at = 0
  while (at < keyedList.length) {
    for (let n = 0; n < LINES_PER_TURN && at < keyedList.length; n++) {
      const end = keyedList.indexOf(LINE_END, at)
      const space = keyedList.indexOf(SPACE, at)
      if (end === -1 || space === -1 || space > end) return undefined
      const cursor = keyedList.toString('latin1', at, space)
      const post = keyedList.toString('utf8', space + 1, end)
      if (!isPostJson(post) || positions.has(cursor)) return undefined
      positions.set(cursor, cursors.length)
      cursors.push(cursor)
      posts.push(post)
      at = end + 1
    }
    await new Promise(setImmediate)
  }
  return {
    bytes: keyedList.length,
    page (after, limit) {
      const last = after === undefined ? -1 : positions.get(after)
      if (last === undefined) return undefined
      const start = last + 1
      const end = Math.min(start + limit, posts.length)
      const body = Buffer.from(`[${posts.slice(start, end).join(',')}]`)
      if (end === posts.length || end === start) return { representation: createRepresentation(body), empty: end === start }
      // As the post API makes it: the ETag covers the next link as well as the bytes.
      const cursor = cursors[end - 1] as string
      const next = decodeCursor(cursor)
      if (next === undefined) return undefined
      return { representation: createRepresentation(body, etagOf(Buffer.concat([body, Buffer.from(`\n${cursor}`)]))), empty: false, next }
    }
  }
}
