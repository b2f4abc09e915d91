// How the front gets a post or the list: every request confirms the copy it holds with the
// upstream after it arrived, so answers are fresh yet mostly served from memory. A copy labelled
// with a posts version is confirmed by asking its upstream for the version now (versions.ts).
// Otherwise (or when the version moved) a conditional GET revalidates it, coalesced among
// concurrent requests for the same path. A new body's shape is checked once, when it arrives
// (answer-checks.ts); what is held, and served in place of a failure, is copies.ts; lists too
// large for memory are held as files (list-files.ts). Pages of a list shape that clients page
// through often are answered from that shape's keyed list (page-indexes.ts).
import { POST_ROUTE } from '../../contract/neighbours.js'
import type { Readable } from 'node:stream'
import type { BodyLimits } from '../../contract/body-limits.js'
import { AbandonedCallError, createCoalescer } from '../../lib/coalescer.js'
import type { Config } from '../../config.js'
import { canonicalSearch, type ListQuery, type PostQuery } from '../../contract/list-query.js'
import type { SortKey } from '../../contract/cursor.js'
import { TAGS_PATH } from '../../contract/tag-counts.js'
import type { UpstreamCacheObserver } from '../../ops/front-metrics.js'
import type { UpstreamClient } from '../upstream/client.js'
import { checkBody, nextCursor, relayedInvalidQuery, strongEtag, totalCount, unexpectedStatus, type CheckedBody, type Expected } from './answer-checks.js'
import { createHeldCopies, type HeldCopy, type Stale } from './copies.js'
import { createListFiles } from './list-files.js'
import { createPageIndexes } from './page-indexes.js'
import { createTimedCall, type Answered } from './timed-calls.js'
import { createVersionConfirmer, labelOf, type VersionLabel } from './versions.js'

export type { CheckedBody } from './answer-checks.js'
export { staleCacheStatus, type Stale } from './copies.js'

export interface UpstreamCacheOptions extends Pick<Config, 'cacheMaxBytes' | 'cacheDiskMaxBytes' | 'staleIfErrorS'>, BodyLimits {
  upstream: UpstreamClient
  /** The metrics (src/ops/front-metrics.ts); undefined: none. */
  observer?: UpstreamCacheObserver
  /** The clock (ms), for tests; Date.now by default. */
  now?: () => number
  /** Page calls of one list shape after which its keyed list is fetched (page-indexes.ts's default otherwise). */
  indexAfterCalls?: number
}

export type PostOutcome =
  | { kind: 'body', body: CheckedBody, stale?: Stale }
  | { kind: 'absent' }

export type ListOutcome =
  | { kind: 'body', body: CheckedBody, stale?: Stale }
  /** A list too large to check whole: relayed as it comes, or from its file (`length`: its bytes), to one client only. */
  | { kind: 'stream', stream: Readable, etag: string | undefined, next?: SortKey, total?: number, length?: number }

/** `wanted`: whether the request still waits for the answer (its client is there); no call is made for it otherwise. */
export interface UpstreamCache {
  list: (query: ListQuery, requestId: string, wanted?: () => boolean) => Promise<ListOutcome>
  post: (slug: string, query: PostQuery, requestId: string, wanted?: () => boolean) => Promise<PostOutcome>
  /** Every tag with its number of posts. */
  tags: (requestId: string, wanted?: () => boolean) => Promise<{ body: CheckedBody, stale?: Stale }>
  /** The copies and page indexes held now, and the bytes they are counted for (within cacheMaxBytes). */
  held: () => { copies: number, bytes: number }
  /** Page indexes being built now (at most one). */
  indexing: () => number
  /** The lists held as files, and their bytes (within cacheDiskMaxBytes). */
  heldOnDisk: () => { lists: number, bytes: number }
  /** Removes the lists held as files. */
  close: () => Promise<void>
}

/**
 * What one upstream call yields; `streamed`: the stream went to the request that made the call.
 * `confirmed`: the body is the held copy, confirmed by a 304.
 */
type Shared = { kind: 'body', body: CheckedBody, confirmed?: true } | { kind: 'absent' } | { kind: 'streamed' }
type Fetched = Exclude<Shared, { kind: 'streamed' }> | Extract<ListOutcome, { kind: 'stream' }>

const LIST_PATH = '/api/posts'

function listOutcome (fetched: Fetched & { stale?: Stale }): ListOutcome {
  if (fetched.kind === 'absent') throw new Error('a list is never absent')
  return fetched
}

export function createUpstreamCache ({
  upstream, cacheMaxBytes, cacheDiskMaxBytes, staleIfErrorS, maxListBytes, maxPostBytes, listBufferLimit, observer, now = Date.now, indexAfterCalls
}: UpstreamCacheOptions): UpstreamCache {
  const coalescer = createCoalescer<Shared>(observer?.joined)
  const copies = createHeldCopies({ cacheMaxBytes, staleIfErrorS, now })
  const files = createListFiles({ maxBytes: cacheDiskMaxBytes, now })
  const timed = createTimedCall(observer)
  const versions = createVersionConfirmer({ upstream, timed, now, joined: observer?.joined })
  const pageIndexes = createPageIndexes({ upstream, timed, versions, copies, observer, indexAfterCalls })

  const call = async (path: string, expected: Expected, requestId: string): Promise<Fetched> =>
    await timed(async (answered) => await callUpstream(path, expected, requestId, answered))

  /** One upstream call, conditional when a copy is held; `answered` learns its status. */
  async function callUpstream (path: string, expected: Expected, requestId: string, answered: Answered): Promise<Fetched> {
    const copy = copies.body(path)
    const list = expected.kind === 'list'
    const response = await upstream.get(path, {
      requestId,
      ifNoneMatch: copy?.upstreamEtag,
      maxBytes: list ? maxListBytes : maxPostBytes,
      streamAbove: list ? listBufferLimit : undefined
    })
    answered.status = response.status
    const version = labelOf(response)
    if (response.status === 304 && copy !== undefined) {
      copy.validatedAt = now()
      copy.version = version
      return { kind: 'body', body: copy, confirmed: true }
    }
    if (response.status === 200 && response.stream !== undefined) {
      copies.forget(path)
      const { stream } = response
      try {
        const next = nextCursor(response, expected)
        const total = totalCount(response, expected)
        const facts = { etag: strongEtag(response.headers.etag), ...(next === undefined ? {} : { next }), ...(total === undefined ? {} : { total }) }
        return { kind: 'stream', stream: files.keep(path, stream, facts, version), ...facts }
      } catch (err) {
        stream.destroy()
        throw err
      }
    }
    if (list) files.forget(path)
    if (response.status === 200) {
      const { body, upstreamEtag } = checkBody(response, expected)
      copies.holdBody(path, body, upstreamEtag, version)
      return { kind: 'body', body }
    }
    if (response.status === 404 && !list) {
      copies.holdAbsence(path, version)
      return { kind: 'absent' }
    }
    if (response.status === 400 && expected.queried) {
      copies.forget(path)
      throw relayedInvalidQuery(response)
    }
    throw unexpectedStatus(response)
  }

  /**
   * The answer for `path`: the held copy when its version confirms it, else the coalesced call.
   * A stream can serve one client only: it goes to the request whose call it was, and the others
   * that shared that call make their own. When the call fails (502/503/504) and stale-if-error
   * is on, the held copy instead, if validated recently enough.
   */
  function answer (path: string, expected: Expected, requestId: string, wanted?: () => boolean): Promise<Fetched & { stale?: Stale }> {
    // Chained, not awaited: a held answer, most of the traffic, passes through fewer promises
    // (about 1.7 µs less of the front's CPU per held post).
    const copy = copies.get(path)
    if (copy?.version === undefined) return fetchAnswer(path, expected, requestId, wanted)
    return versions.confirmed(copy as HeldCopy & { version: VersionLabel }, requestId, wanted).then((current) => {
      if (!current) return fetchAnswer(path, expected, requestId, wanted)
      if (copy.kind === 'absent') return copy
      observer?.served('hit')
      return { kind: 'body', body: copy }
    }, (err: unknown) => staleOr(path, err))
  }

  /** The held copy of `path` in place of the failure `err`, when stale-if-error allows it; else `err` again. */
  function staleOr (path: string, err: unknown): Fetched & { stale?: Stale } {
    const copy = copies.staleFor(path, err)
    if (copy === undefined) throw err
    observer?.served('stale')
    return { kind: 'body', body: copy, stale: { status: (err as { status: number }).status } }
  }

  /** The answer for `path` when no held copy is confirmed: a list's file, or the coalesced call. */
  async function fetchAnswer (path: string, expected: Expected, requestId: string, wanted?: () => boolean): Promise<Fetched & { stale?: Stale }> {
    try {
      const file = expected.kind === 'list' ? files.get(path) : undefined
      if (file !== undefined && await versions.confirmed(file, requestId, wanted)) {
        const stream = await files.open(path, file)
        if (stream !== undefined) {
          observer?.served('hit')
          return { kind: 'stream', stream, length: file.bytes, ...file.facts }
        }
      }
      let own: Fetched | undefined
      const shared = await coalescer.run(path, async () => {
        const fetched = await call(path, expected, requestId)
        if (fetched.kind !== 'stream') return fetched
        own = fetched
        return { kind: 'streamed' }
      }, wanted)
      if (shared.kind === 'body') observer?.served(shared.confirmed === true ? 'hit' : 'miss')
      if (shared.kind !== 'streamed') return shared
      if (own !== undefined) return own
      if (wanted?.() === false) throw new AbandonedCallError()
      return await call(path, expected, requestId)
    } catch (err) {
      return staleOr(path, err)
    }
  }

  return {
    held: () => copies.held(),
    indexing: () => pageIndexes.building(),
    heldOnDisk: () => files.held(),
    close: async () => await files.close(),
    list (query, requestId, wanted) {
      const { limit } = query
      // Canonical: the same query in any spelling is one copy and one coalesced call.
      const search = canonicalSearch(query)
      const path = LIST_PATH + search
      const fromCopyOrCall = (): Promise<ListOutcome> =>
        answer(path, { kind: 'list', limit, queried: search !== '', counted: query.count !== undefined }, requestId, wanted).then(listOutcome)
      // A page index holds the posts of a shape in list order, not their count nor a search's
      // relevance order: a counted page, or a search's, is asked for. Nor their renderings: its
      // keyed list would carry every post's HTML (a feed's shape is only ever read from its first
      // page, which is held as a copy like any list).
      if (limit === undefined || query.count !== undefined || query.q !== undefined || query.formats !== undefined) return fromCopyOrCall()
      // Chained, not awaited, as answer() is.
      return pageIndexes.page({ ...query, limit }, path, requestId, wanted).then((page) => page === undefined ? fromCopyOrCall() : { kind: 'body', body: page })
    },
    async tags (requestId, wanted) {
      const fetched = await answer(TAGS_PATH, { kind: 'tags', queried: false }, requestId, wanted)
      if (fetched.kind !== 'body') throw new Error('tags are never absent nor streamed')
      return fetched
    },
    post (slug, query, requestId, wanted) {
      const search = canonicalSearch(query)
      // Built from the encoded slug only; never `new URL(slug, base)`, which resolves dot segments and `//host`.
      return answer(`${POST_ROUTE}${encodeURIComponent(slug)}${search}`, { kind: 'post', slug, queried: search !== '' }, requestId, wanted).then((fetched) => {
        if (fetched.kind === 'stream') throw new Error('a post is never streamed')
        return fetched
      })
    }
  }
}
