// Pages from memory. A page after a random cursor is nearly always one nobody asked for
// before, so a cache of pages cannot answer it, and each would cost an upstream call and a store
// read. For a list shape (its fields and tag) that clients page through often, the front holds
// its keyed list instead, indexed (page-index.ts), and a hit costs what a cached post costs: it is
// confirmed by the list's posts version like any copy (versions.ts). A cursor the list
// does not hold (its post was deleted or moved, or it is not one of ours) is left to the upstream.
import { buffer } from 'node:stream/consumers'
import { LRUCache } from 'lru-cache'
import { keyedListPath, shapeOf } from '../../contract/keyed-list.js'
import type { ListQuery } from '../../contract/list-query.js'
import { encodeCursor } from '../../contract/cursor.js'
import { createRepresentation } from '../../http/representation.js'
import type { UpstreamCacheObserver } from '../../ops/front-metrics.js'
import type { UpstreamClient } from '../upstream/client.js'
import { buildPageIndex, type IndexedPage } from './page-index.js'
import type { TimedCall } from './timed-calls.js'
import type { HeldCopies, HeldIndex } from './copies.js'
import { labelOf, type VersionConfirmer } from './versions.js'

/**
 * Pages after a cursor of one list shape sent upstream before the front fetches its keyed list:
 * fetching and indexing it costs about as much as this many page calls. A first page is not
 * counted: it is one page, held as a copy like any list, which clients that never page (a home
 * page of the newest posts) ask for again and again.
 */
export const INDEX_AFTER_CALLS = 256
/** The most bytes a keyed list may have, whatever the budget (100,000 posts of three short fields take about 22 MB). */
const MAX_KEYED_LIST_BYTES = 32 * 1024 * 1024
/**
 * The share of CACHE_MAX_MB one keyed list may take: while it is read and indexed it is outside
 * the budget (its chunks, then the whole list), so a build holds up to twice its bytes beyond
 * the budget for a moment; a quarter keeps that within half the budget, and the index held
 * within about a quarter. (Three eighths, which would hold the 100,000 posts above at the
 * default 64 MB, took the front past 400 MB in one of two runs of `npm run bench:flood`.)
 */
const KEYED_LIST_SHARE = 0.25
/** Shapes whose page calls are counted: clients choose shapes, so the oldest are forgotten. */
const MAX_COUNTED_SHAPES = 64
/** Pages built once and not held yet, by path (a few MB of strings at most): forgotten all at once past this many. */
const MAX_PAGES_BUILT_ONCE = 10_000
/** What `page` gives when no index can answer, without a promise of its own. */
const NO_PAGE: Promise<undefined> = Promise.resolve(undefined)

export interface PageIndexesOptions {
  upstream: UpstreamClient
  timed: TimedCall
  versions: VersionConfirmer
  /** Where the indexes are held, within the budget of the copies. */
  copies: HeldCopies
  observer?: UpstreamCacheObserver
  /** Page calls after a cursor of one shape after which its keyed list is fetched (INDEX_AFTER_CALLS by default). */
  indexAfterCalls?: number
}

export interface PageIndexes {
  /**
   * The page of `query` (a copy held at `pagePath`) from its shape's keyed list, when one is held
   * and its version is still current; undefined otherwise (the page goes upstream, and is counted
   * towards fetching one).
   */
  page: (query: ListQuery & { limit: number }, pagePath: string, requestId: string, wanted?: () => boolean) => Promise<IndexedPage | undefined>
  /** Keyed lists being fetched or indexed now (at most one). */
  building: () => number
}

export function createPageIndexes ({ upstream, timed, versions, copies, observer, indexAfterCalls = INDEX_AFTER_CALLS }: PageIndexesOptions): PageIndexes {
  /**
   * Per shape: its page calls since its keyed list was last fetched, and how many fetch it. That
   * number doubles each time a fetch holds nothing (a list beyond the budget, an upstream
   * failure): each costs the post API a whole list, and the next would most likely fail alike.
   */
  const pageCalls = new LRUCache<string, { calls: number, fetchAfter: number }>({ max: MAX_COUNTED_SHAPES })
  const maxKeyedListBytes = Math.min(MAX_KEYED_LIST_BYTES, Math.floor(copies.maxBytes * KEYED_LIST_SHARE))
  const builtOnce = new Set<string>()
  /** The keyed list being fetched and indexed: one at a time, so that a flood of shapes costs one list's memory. */
  let building: string | undefined

  /**
   * Fetches and indexes the keyed list at `path`, in the background: pages keep going upstream
   * meanwhile. Without a posts version (an upstream that sends none, or has no keyed lists) nothing
   * could confirm it, and it is not held.
   */
  async function fetchIndex (path: string, counted: { calls: number, fetchAfter: number }, requestId: string): Promise<void> {
    building = path
    counted.calls = 0
    counted.fetchAfter *= 2
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
      if (pages !== undefined && pages.memoryBytes <= copies.maxBytes / 2) {
        copies.holdIndex(path, pages, version)
        // Held: once it is dropped (the posts changed, or evicted), counted from the start.
        pageCalls.delete(path)
      }
    } catch {
      // The upstream failed, or the list is too large to hold: pages are answered upstream.
    } finally {
      building = undefined
    }
  }

  /** A page after a cursor of the shape at `path`, sent upstream: counted towards fetching its keyed list. */
  function countPageCall (path: string, requestId: string): void {
    const counted = pageCalls.get(path) ?? { calls: 0, fetchAfter: indexAfterCalls }
    counted.calls++
    pageCalls.set(path, counted)
    // In the background (fetchIndex never rejects); while another builds, pages go upstream
    // and this shape tries again on its next page.
    if (counted.calls >= counted.fetchAfter && building === undefined) fetchIndex(path, counted, requestId).catch(() => {})
  }

  /**
   * The page of `query` from `held`, just confirmed. A page asked for again is held as the copy
   * an upstream page would have been: joining and hashing a page of 20 full posts (76 KB) cost
   * four times a held answer, and its compressed variants were made again for every request.
   * Its label is the index's. A page after a random cursor is nearly always asked for once:
   * holding each would only churn the copies, and the collector with them.
   */
  function heldPage (query: ListQuery & { limit: number }, pagePath: string, held: HeldIndex): IndexedPage | undefined {
    const copy = copies.body(pagePath)
    if (copy?.version?.value === held.version.value && copy.version.upstream === held.version.upstream) {
      observer?.served('hit')
      return copy
    }
    const page = held.pages.page(query.after === undefined ? undefined : encodeCursor(query.after), query.limit)
    if (page === undefined) return undefined
    if (builtOnce.delete(pagePath)) {
      // Held: in memory of its own (a page is built in a shared slab).
      const { body, etag } = page.representation
      copies.holdBody(pagePath, { ...page, representation: createRepresentation(body, etag) }, etag, held.version)
    } else {
      if (builtOnce.size >= MAX_PAGES_BUILT_ONCE) builtOnce.clear()
      builtOnce.add(pagePath)
    }
    observer?.served('hit')
    return page
  }

  return {
    building: () => building === undefined ? 0 : 1,
    page (query, pagePath, requestId, wanted) {
      // No budget, no index.
      if (maxKeyedListBytes === 0) return NO_PAGE
      const path = keyedListPath(shapeOf(query))
      const held = copies.index(path)
      if (held === undefined) {
        if (query.after !== undefined) countPageCall(path, requestId)
        return NO_PAGE
      }
      // Chained, not awaited, as a held copy's answer is (upstream-cache.ts).
      return versions.confirmed(held, requestId, wanted).then((current) => {
        if (!current) {
          // The posts changed: a new keyed list is fetched once pages have gone upstream again.
          if (copies.index(path) === held) copies.forget(path)
          return undefined
        }
        return heldPage(query, pagePath, held)
      })
    }
  }
}
