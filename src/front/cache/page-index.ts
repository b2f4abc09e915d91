// Pages from memory. A page after a random cursor is nearly always one nobody asked for
// before, so a cache of pages cannot answer it, and each would cost an upstream call and a store
// read. For a list shape (its fields and tag) that clients page through often, the front holds
// its keyed list instead (src/contract/keyed-list.ts): every post of the shape, in list order, after its
// cursor. The page after a cursor is then the posts after that cursor's line, with the same
// bytes, Link and ETag as the post API's page, and a hit costs what a cached post costs: it is
// confirmed by the list's posts version like any copy (versions.ts). A cursor the list
// does not hold (its post was deleted or moved, or it is not one of ours) is left to the upstream.
import { buffer } from 'node:stream/consumers'
import { LRUCache } from 'lru-cache'
import { keyedListPath, shapeOf } from '../../contract/keyed-list.js'
import { decodeCursor, encodeCursor, type ListQuery, type SortKey } from '../../contract/list-query.js'
import { createRepresentation, etagOf, type Representation } from '../../http/representation.js'
import type { UpstreamCacheObserver } from '../../ops/front-metrics.js'
import type { UpstreamClient } from '../upstream/client.js'
import { isPost, parseUpstreamJson } from './answer-checks.js'
import type { TimedCall } from './timed-calls.js'
import type { HeldCopies } from './copies.js'
import { labelOf, type VersionConfirmer } from './versions.js'

/** A page, as the cache hands one over. */
export interface IndexedPage {
  representation: Representation
  empty: boolean
  next?: SortKey
}

export interface PageIndex {
  /** Bytes of the keyed list it was built from. */
  readonly bytes: number
  /** Bytes of memory it is counted for (its strings, two bytes a character at worst, and its map). */
  readonly memoryBytes: number
  /** The page of at most `limit` posts after `after` (from the start without), or undefined when the list does not hold that cursor. */
  page: (after: string | undefined, limit: number) => IndexedPage | undefined
}

const LINE_END = 0x0a
const SPACE = 0x20
/** What one line costs beyond its characters: the map entry, two array slots and two string headers. */
const LINE_OVERHEAD_BYTES = 96
/** Lines parsed between two turns of the event loop while an index is built. */
const LINES_PER_TURN = 2000

/** Whether a line's JSON is a post, as an upstream body's must be (answer-checks.ts). */
function parsesAsPost (text: string): boolean {
  try {
    return isPost(parseUpstreamJson(text))
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
      if (!parsesAsPost(post) || positions.has(cursor)) return undefined
      positions.set(cursor, cursors.length)
      cursors.push(cursor)
      posts.push(post)
      at = end + 1
    }
    await new Promise(setImmediate)
  }
  return {
    bytes: keyedList.length,
    memoryBytes: 2 * keyedList.length + LINE_OVERHEAD_BYTES * cursors.length,
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

/**
 * Pages of one list shape sent upstream before the front fetches its keyed list: fetching and
 * indexing it costs about as much as this many page calls.
 */
export const INDEX_AFTER_CALLS = 256
/** The most bytes a keyed list may have, whatever the budget (100,000 posts of three short fields take about 14 MB). */
const MAX_KEYED_LIST_BYTES = 32 * 1024 * 1024
/**
 * The share of CACHE_MAX_MB one index may take: its keyed list is read whole while it is built,
 * beside the strings it becomes, so a build holds up to three times its list's bytes outside
 * the budget for a moment; a quarter keeps that within the budget, and the index within half.
 */
const KEYED_LIST_SHARE = 0.25
/** Shapes whose page calls are counted: clients choose shapes, so the oldest are forgotten. */
const MAX_COUNTED_SHAPES = 64

export interface PageIndexesOptions {
  upstream: UpstreamClient
  timed: TimedCall
  versions: VersionConfirmer
  /** Where the indexes are held, within the budget of the copies. */
  copies: HeldCopies
  observer?: UpstreamCacheObserver
  /** Page calls of one shape after which its keyed list is fetched (INDEX_AFTER_CALLS by default). */
  indexAfterCalls?: number
}

export interface PageIndexes {
  /**
   * The page of `query` from its shape's keyed list, when one is held and its version is still
   * current; undefined otherwise (the page goes upstream, and is counted towards fetching one).
   */
  page: (query: ListQuery & { limit: number }, requestId: string, wanted?: () => boolean) => Promise<IndexedPage | undefined>
  /** Keyed lists being fetched or indexed now (at most one). */
  building: () => number
}

export function createPageIndexes ({ upstream, timed, versions, copies, observer, indexAfterCalls = INDEX_AFTER_CALLS }: PageIndexesOptions): PageIndexes {
  const pageCalls = new LRUCache<string, number>({ max: MAX_COUNTED_SHAPES })
  const maxKeyedListBytes = Math.min(MAX_KEYED_LIST_BYTES, Math.floor(copies.maxBytes * KEYED_LIST_SHARE))
  /** The keyed list being fetched and indexed: one at a time, so that a flood of shapes costs one list's memory. */
  let building: string | undefined

  /**
   * Fetches and indexes the keyed list at `path`, in the background: pages keep going upstream
   * meanwhile. Without a posts version (an upstream that sends none, or has no keyed lists) nothing
   * could confirm it, and it is not held.
   */
  async function fetchIndex (path: string, requestId: string): Promise<void> {
    building = path
    pageCalls.delete(path)
    try {
      // As a stream, so that only silence bounds it, not a request's budget: a post API flooded
      // with page calls takes seconds to send 100,000 posts, and failing here would count
      // against it as an upstream failure.
      const response = await timed(async (answered) => {
        const answer = await upstream.get(path, { requestId, maxBytes: maxKeyedListBytes, streamAbove: 0 })
        answered.status = answer.status
        return answer
      })
      const version = labelOf(response)
      if (response.status !== 200 || version === undefined) {
        response.stream?.destroy()
        return
      }
      const pages = await buildPageIndex(response.stream === undefined ? response.body : await buffer(response.stream))
      if (pages !== undefined && pages.memoryBytes <= copies.maxBytes / 2) copies.holdIndex(path, pages, version)
    } catch {
      // The upstream failed, or the list is too large to hold: pages are answered upstream.
    } finally {
      building = undefined
    }
  }

  return {
    building: () => building === undefined ? 0 : 1,
    async page (query, requestId, wanted) {
      const path = keyedListPath(shapeOf(query))
      const held = copies.index(path)
      if (held === undefined) {
        const calls = (pageCalls.get(path) ?? 0) + 1
        pageCalls.set(path, calls)
        // In the background (fetchIndex never rejects); while another builds, pages go upstream
        // and this shape tries again on its next page.
        if (calls >= indexAfterCalls && building === undefined) fetchIndex(path, requestId).catch(() => {})
        return undefined
      }
      if (!await versions.confirmed(held, requestId, wanted)) {
        // The posts changed: a new keyed list is fetched once pages have gone upstream again.
        if (copies.index(path) === held) copies.forget(path)
        return undefined
      }
      const page = held.pages.page(query.after === undefined ? undefined : encodeCursor(query.after), query.limit)
      if (page === undefined) return undefined
      observer?.served('hit')
      return page
    }
  }
}
