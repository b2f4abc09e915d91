// How the front gets a post or the list: every request confirms the copy it holds with the
// upstream after it arrived, so answers are fresh yet mostly served from memory. A copy labelled
// with a posts version (src/contract/posts-version.ts) is confirmed by asking its upstream for the version
// now: one call shared by every request waiting meanwhile, whatever it asked for. Otherwise (or
// when the version moved) a conditional GET revalidates it, coalesced among concurrent requests
// for the same path. A new body's shape is checked once, when it arrives; a post the upstream says
// does not exist is held too when a version labels that answer. When the upstream fails and
// stale-if-error is on, a recent enough copy is served instead, flagged. Each distinct query
// (path plus its parameters in canonical order) is its own copy. Pages of a list shape that
// clients page through often are answered from that shape's keyed list (page-index.ts).
import type { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { LRUCache } from 'lru-cache'
import sjson from 'secure-json-parse'
import type { BodyLimits } from '../../contract/body-limits.js'
import { AbandonedCallError, createCoalescer } from '../../lib/coalescer.js'
import type { Config } from '../../config.js'
import { keyedListPath, shapeOf } from '../../contract/keyed-list.js'
import { canonicalSearch, encodeCursor, nextCursorIn, type ListQuery, type PostQuery, type SortKey } from '../../contract/list-query.js'
import { answerOutcome, failureOutcome, type UpstreamCacheObserver } from '../../ops/front-metrics.js'
import { POSTS_VERSION_HEADER, processOf, versionIn } from '../../contract/posts-version.js'
import { PROBLEM_TYPE_BASE, ProblemError } from '../../contract/problems.js'
import { createRepresentation, etagOf, type Representation } from '../../http/representation.js'
import { isStorableText } from '../../contract/slug.js'
import { buildPageIndex, type PageIndex } from './page-index.js'
import type { UpstreamClient, UpstreamResponse } from '../upstream/client.js'

export interface UpstreamCacheOptions extends Pick<Config, 'cacheMaxBytes' | 'staleIfErrorS'>, BodyLimits {
  upstream: UpstreamClient
  /** The metrics (src/ops/front-metrics.ts); undefined: none. */
  observer?: UpstreamCacheObserver
  /** The clock (ms), for tests; Date.now by default. */
  now?: () => number
}

/** An upstream body that passed its shape check, kept with the validator to revalidate it. */
export interface CheckedBody {
  representation: Representation
  /** Lists only: the array is empty (404 at the front). */
  empty: boolean
  /** Pages only: where the next page starts, when more posts follow (from the upstream's Link). */
  next?: SortKey
}

/** A held copy served because the upstream failed with `status` (RFC 9211 `fwd-status`). */
export interface Stale { status: number }

export type PostOutcome =
  | { kind: 'body', body: CheckedBody, stale?: Stale }
  | { kind: 'absent' }

export type ListOutcome =
  | { kind: 'body', body: CheckedBody, stale?: Stale }
  /** A list too large to check whole: relayed as it comes, to one client only. */
  | { kind: 'stream', stream: Readable, etag: string | undefined, next?: SortKey }

/** `wanted`: whether the request still waits for the answer (its client is there); no call is made for it otherwise. */
export interface UpstreamCache {
  list: (query: ListQuery, requestId: string, wanted?: () => boolean) => Promise<ListOutcome>
  post: (slug: string, query: PostQuery, requestId: string, wanted?: () => boolean) => Promise<PostOutcome>
  /** The copies held now, and the bytes they are counted for. */
  held: () => { copies: number, bytes: number }
}

/** The upstream that answered, and the posts version it labelled its answer with. */
interface VersionLabel {
  upstream: string
  value: string
}

interface Confirmation {
  /** When the upstream last confirmed this copy (Date.now()). */
  validatedAt: number
  /** Set when the upstream labelled its answer with a posts version: confirmed by the version alone. */
  version: VersionLabel | undefined
}

/** A body, revalidated by its ETag when no version confirms it. */
interface HeldBody extends CheckedBody, Confirmation {
  kind: 'body'
  upstreamEtag: string
}

/** A post the upstream said does not exist: held only under a version label, the one way to confirm it. */
interface HeldAbsence extends Confirmation {
  kind: 'absent'
  version: VersionLabel
}

type HeldCopy = HeldBody | HeldAbsence

/**
 * What one upstream call yields; `streamed`: the stream went to the request that made the call.
 * `confirmed`: the body is the held copy, confirmed by a 304.
 */
type Shared = { kind: 'body', body: CheckedBody, confirmed?: true } | { kind: 'absent' } | { kind: 'streamed' }
type Fetched = Exclude<Shared, { kind: 'streamed' }> | Extract<ListOutcome, { kind: 'stream' }>

/**
 * What the body of a call must be: the list (a page of at most `limit` posts when set) or the
 * post `slug`; `queried`: the call carries list-query parameters (so a 400 of the upstream may
 * be the client's mistake, relayed).
 */
type Expected =
  | { kind: 'list', limit: number | undefined, queried: boolean }
  | { kind: 'post', slug: string, queried: boolean }

/** Retry-After sent with a relayed 503 when the upstream gave none we can pass on. */
const DEFAULT_RETRY_AFTER_S = 5
const RETRY_AFTER = /^(?:\d{1,9}|[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$/
const STRONG_ETAG = /^"[\x21\x23-\x7e]*"$/
const LIST_PATH = '/api/posts'
/** Copies held at most, whatever their size: every distinct query is one, and clients choose queries. */
const MAX_HELD_COPIES = 10_000
/** A relayed problem detail longer than this is not relayed (an upstream we do not recognise). */
const MAX_RELAYED_DETAIL = 500
/**
 * Behind one base URL, a balancer may spread calls over several post API processes, whose
 * versions never match each other's: a version read would then cost a call and confirm nothing.
 * Over each run of this many confirmations tried on an upstream, if at least MIXED_SHARE of its
 * answers came from another process than the copy's label, version reads there pause for
 * MIXED_PAUSE_MS (copies are revalidated by their ETag meanwhile). A restart changes the process
 * once, and pauses nothing.
 */
const MIXED_WINDOW = 32
const MIXED_SHARE = 0.5
const MIXED_PAUSE_MS = 60_000

/**
 * Pages of one list shape sent upstream before the front fetches its keyed list (page-index.ts):
 * fetching and indexing it costs about as much as this many page calls.
 */
const INDEX_AFTER_CALLS = 256
/** Keyed lists held at most, and the most bytes one may have (100,000 posts of three short fields take about 14 MB). */
const MAX_PAGE_INDEXES = 4
const MAX_KEYED_LIST_BYTES = 32 * 1024 * 1024
/** Shapes whose page calls are counted: clients choose shapes, so the oldest are forgotten. */
const MAX_COUNTED_SHAPES = 64

/** A keyed list held, confirmed by its version as a copy is. */
interface HeldIndex extends Confirmation {
  pages: PageIndex
  version: VersionLabel
}

/** How the version reads of one upstream went lately (see MIXED_WINDOW). */
interface ProcessMix {
  tried: number
  foreign: number
  pausedUntil: number
}

export function createUpstreamCache ({ upstream, cacheMaxBytes, staleIfErrorS, maxListBytes, maxPostBytes, listBufferLimit, observer, now = Date.now }: UpstreamCacheOptions): UpstreamCache {
  const coalescer = createCoalescer<Shared>(observer?.joined)
  const copies = new LRUCache<string, HeldCopy>({
    max: MAX_HELD_COPIES,
    maxSize: Math.max(1, cacheMaxBytes), // 0 disables: nothing fits
    // Room for the compressed variants made beside the body.
    sizeCalculation: (copy) => copy.kind === 'body' ? Math.ceil(copy.representation.body.length * 1.5) + 256 : 256
  })
  // One version read at a time per upstream, shared by every request that arrived before it started.
  const versionReads = createCoalescer<string | undefined>(observer?.joined)
  const mixes = new Map<string, ProcessMix>()
  const pageIndexes = new LRUCache<string, HeldIndex>({ max: MAX_PAGE_INDEXES })
  const pageCalls = new LRUCache<string, number>({ max: MAX_COUNTED_SHAPES })
  const indexing = new Set<string>()

  /** Whether version reads on `from` are worth making now (not paused: see MIXED_WINDOW). */
  function readsVersions (from: string): boolean {
    const mix = mixes.get(from)
    return mix === undefined || mix.pausedUntil <= now()
  }

  /** Counts one confirmation tried on `from`: whether its version came from the label's process. */
  function countProcess (from: string, label: string, read: string): void {
    let mix = mixes.get(from)
    if (mix === undefined) mixes.set(from, mix = { tried: 0, foreign: 0, pausedUntil: 0 })
    mix.tried++
    if (processOf(read) !== processOf(label)) mix.foreign++
    if (mix.tried < MIXED_WINDOW) return
    if (mix.foreign >= MIXED_SHARE * mix.tried) mix.pausedUntil = now() + MIXED_PAUSE_MS
    mix.tried = 0
    mix.foreign = 0
  }

  /** Checks a whole upstream body once (SPEC's 502 when its shape is wrong) and holds it if it has a validator. */
  function check (path: string, response: UpstreamResponse, expected: Expected, version: VersionLabel | undefined): CheckedBody {
    const value = parseUpstreamJson(response.body)
    if (expected.kind === 'list') {
      if (!Array.isArray(value) || !value.every(isPost)) throw badResponse('The upstream post API did not answer with an array of posts.')
      if (expected.limit !== undefined && value.length > expected.limit) throw badResponse('The upstream post API answered with more posts than the limit.')
    } else if (!isPost(value) || value.slug !== expected.slug) {
      throw badResponse('The upstream post API did not answer with the requested post.')
    }
    const next = nextCursor(response, expected)
    const upstreamEtag = strongEtag(response.headers.etag)
    // Without the upstream's validator, ours must cover the next link as well as the bytes.
    const etag = upstreamEtag ?? etagOf(next === undefined ? response.body : Buffer.concat([response.body, Buffer.from(`\n${encodeCursor(next)}`)]))
    const body = { representation: createRepresentation(response.body, etag), empty: Array.isArray(value) && value.length === 0, ...(next === undefined ? {} : { next }) }
    // Only a body with a validator can be revalidated; the others are used once.
    if (upstreamEtag === undefined) copies.delete(path)
    else copies.set(path, { kind: 'body', ...body, upstreamEtag, validatedAt: now(), version })
    return body
  }

  /**
   * One upstream call, timed by outcome when there are metrics; `answered` learns its status (a
   * run that neither got an answer nor failed made no call, and is not counted).
   */
  async function timed<T> (run: (answered: { status?: number }) => Promise<T>): Promise<T> {
    const answered: { status?: number } = {}
    if (observer === undefined) return await run(answered)
    const started = performance.now()
    // Read before the call: with none in rotation, the client fails at once without calling.
    const failedFast = upstream.inRotation() === 0
    try {
      const result = await run(answered)
      if (answered.status !== undefined) observer.called(answerOutcome(answered.status), performance.now() - started)
      return result
    } catch (err) {
      observer.called(failureOutcome(err, answered.status, failedFast), performance.now() - started)
      throw err
    }
  }

  const call = async (path: string, expected: Expected, requestId: string): Promise<Fetched> =>
    await timed(async (answered) => await callUpstream(path, expected, requestId, answered))

  /**
   * Whether `copy` is current, by its version label: its upstream reads the same version now, in
   * a read that started after this request arrived (shared with every request that arrived
   * meanwhile). False when the version moved or cannot be read; the copy must be revalidated.
   */
  async function confirmedByVersion (copy: Confirmation & { version: VersionLabel }, requestId: string, wanted?: () => boolean): Promise<boolean> {
    const { upstream: from, value } = copy.version
    const read = await versionReads.run(from, async () => await readVersion(from, requestId), wanted)
    if (read !== undefined) countProcess(from, value, read)
    if (read !== value) return false
    copy.validatedAt = now()
    return true
  }

  /**
   * The version `from` reads now; undefined when it cannot tell (out of rotation, or any failure
   * a regular call may get past: it is then revalidated by one, retried elsewhere if need be). A
   * time-out fails the request, as a regular call's would (which is never retried).
   */
  async function readVersion (from: string, requestId: string): Promise<string | undefined> {
    try {
      return await timed(async (answered) => {
        const read = await upstream.version(from, requestId)
        if (read === undefined) return undefined
        answered.status = read.status
        if (read.status !== 200) throw new ProblemError('upstream-bad-response', `The upstream post API answered the version with status ${read.status}.`)
        return read.version
      })
    } catch (err) {
      if (err instanceof ProblemError && err.kind === 'upstream-timeout') throw err
      return undefined
    }
  }

  /** One upstream call, conditional when a copy is held; `answered` learns its status. */
  async function callUpstream (path: string, expected: Expected, requestId: string, answered: { status?: number }): Promise<Fetched> {
    const held = copies.get(path)
    const copy = held?.kind === 'body' ? held : undefined
    const list = expected.kind === 'list'
    const response = await upstream.get(path, {
      requestId,
      ifNoneMatch: copy?.upstreamEtag,
      maxBytes: list ? maxListBytes : maxPostBytes,
      streamAbove: list ? listBufferLimit : undefined
    })
    answered.status = response.status
    const value = versionIn(response.headers[POSTS_VERSION_HEADER])
    const version = value === undefined ? undefined : { upstream: response.upstream, value }
    if (response.status === 304 && copy !== undefined) {
      copy.validatedAt = now()
      copy.version = version
      return { kind: 'body', body: copy, confirmed: true }
    }
    if (response.status === 200 && response.stream !== undefined) {
      copies.delete(path)
      const { stream } = response
      try {
        const next = nextCursor(response, expected)
        return { kind: 'stream', stream, etag: strongEtag(response.headers.etag), ...(next === undefined ? {} : { next }) }
      } catch (err) {
        stream.destroy()
        throw err
      }
    }
    if (response.status === 200) return { kind: 'body', body: check(path, response, expected, version) }
    if (response.status === 404 && !list) {
      if (version === undefined) copies.delete(path)
      else copies.set(path, { kind: 'absent', validatedAt: now(), version })
      return { kind: 'absent' }
    }
    if (response.status === 400 && expected.queried) {
      copies.delete(path)
      throw relayedInvalidQuery(response)
    }
    throw unexpectedStatus(response)
  }

  /**
   * The coalesced call. A stream can serve one client only: it goes to the request whose call it
   * was, and the others that shared that call make their own. When the call fails (502/503/504)
   * and stale-if-error is on, the held copy instead, if validated recently enough.
   */
  async function fetch (path: string, expected: Expected, requestId: string, wanted?: () => boolean): Promise<Fetched & { stale?: Stale }> {
    try {
      const copy = copies.get(path)
      if (copy?.version !== undefined && readsVersions(copy.version.upstream) &&
        await confirmedByVersion(copy as HeldCopy & { version: VersionLabel }, requestId, wanted)) {
        if (copy.kind === 'absent') return copy
        observer?.served('hit')
        return { kind: 'body', body: copy }
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
      const held = staleIfErrorS > 0 && err instanceof ProblemError && err.status >= 502 ? copies.get(path) : undefined
      const copy = held?.kind === 'body' ? held : undefined
      if (copy === undefined || now() - copy.validatedAt > staleIfErrorS * 1000) throw err
      observer?.served('stale')
      return { kind: 'body', body: copy, stale: { status: (err as ProblemError).status } }
    }
  }

  /**
   * The page of `query` from its shape's keyed list, when one is held and its version is still
   * current; undefined otherwise (the page goes upstream, and is counted towards fetching one).
   */
  async function indexedPage (query: ListQuery & { limit: number }, requestId: string, wanted?: () => boolean): Promise<ListOutcome | undefined> {
    const path = keyedListPath(shapeOf(query))
    const held = pageIndexes.get(path)
    if (held === undefined) {
      const calls = (pageCalls.get(path) ?? 0) + 1
      pageCalls.set(path, calls)
      // In the background: fetchPageIndex never rejects.
      if (calls >= INDEX_AFTER_CALLS && !indexing.has(path)) fetchPageIndex(path, requestId).catch(() => {})
      return undefined
    }
    if (!readsVersions(held.version.upstream)) return undefined
    if (!await confirmedByVersion(held, requestId, wanted)) {
      // The posts changed: a new keyed list is fetched once pages have gone upstream again.
      if (pageIndexes.get(path) === held) pageIndexes.delete(path)
      return undefined
    }
    const page = held.pages.page(query.after === undefined ? undefined : encodeCursor(query.after), query.limit)
    if (page === undefined) return undefined
    observer?.served('hit')
    return { kind: 'body', body: page }
  }

  /**
   * Fetches and indexes the keyed list at `path`, in the background: pages keep going upstream
   * meanwhile. Without a posts version (an upstream that sends none, or has no keyed lists) nothing
   * could confirm it, and it is not held.
   */
  async function fetchPageIndex (path: string, requestId: string): Promise<void> {
    indexing.add(path)
    pageCalls.delete(path)
    try {
      // As a stream, so that only silence bounds it, not a request's budget: a post API flooded
      // with page calls takes seconds to send 100,000 posts, and failing here would count
      // against it as an upstream failure.
      const response = await timed(async (answered) => {
        const answer = await upstream.get(path, { requestId, maxBytes: MAX_KEYED_LIST_BYTES, streamAbove: 0 })
        answered.status = answer.status
        return answer
      })
      const value = versionIn(response.headers[POSTS_VERSION_HEADER])
      if (response.status !== 200 || value === undefined) {
        response.stream?.destroy()
        return
      }
      const pages = await buildPageIndex(response.stream === undefined ? response.body : await buffer(response.stream))
      if (pages !== undefined) pageIndexes.set(path, { pages, version: { upstream: response.upstream, value }, validatedAt: now() })
    } catch {
      // The upstream failed, or the list is too large to hold: pages are answered upstream.
    } finally {
      indexing.delete(path)
    }
  }

  return {
    held: () => ({ copies: copies.size, bytes: copies.calculatedSize }),
    async list (query, requestId, wanted) {
      const { limit } = query
      if (limit !== undefined) {
        const page = await indexedPage({ ...query, limit }, requestId, wanted)
        if (page !== undefined) return page
      }
      // Canonical: the same query in any spelling is one copy and one coalesced call.
      const search = canonicalSearch(query)
      const fetched = await fetch(LIST_PATH + search, { kind: 'list', limit: query.limit, queried: search !== '' }, requestId, wanted)
      if (fetched.kind === 'absent') throw new Error('a list is never absent')
      return fetched
    },
    async post (slug, query, requestId, wanted) {
      const search = canonicalSearch(query)
      // Built from the encoded slug only; never `new URL(slug, base)`, which resolves dot segments and `//host`.
      const fetched = await fetch(`/api/post/${encodeURIComponent(slug)}${search}`, { kind: 'post', slug, queried: search !== '' }, requestId, wanted)
      if (fetched.kind === 'stream') throw new Error('a post is never streamed')
      return fetched
    }
  }
}

type JsonObject = Record<string, unknown>

function isPost (value: unknown): value is JsonObject & { slug: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as JsonObject).slug === 'string'
}

function badResponse (detail: string, cause?: unknown): ProblemError {
  return new ProblemError('upstream-bad-response', detail, { cause })
}

/** Parses an upstream body; `__proto__`/`constructor.prototype` keys are refused (prototype poisoning). */
function parseUpstreamJson (body: Buffer): unknown {
  try {
    return sjson.parse(body.toString('utf8'), null, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    throw badResponse('The upstream post API answered with a body that is not acceptable JSON.', err)
  }
}

/**
 * Where the next page starts, from the upstream's Link header: only for a page, and only its
 * cursor, checked as a client's would be. The link itself is never followed nor passed on.
 */
function nextCursor (response: UpstreamResponse, expected: Expected): SortKey | undefined {
  const header = response.headers.link
  if (expected.kind !== 'list' || expected.limit === undefined || header === undefined) return undefined
  const next = nextCursorIn(Array.isArray(header) ? header.join(', ') : header)
  if (next === null) throw badResponse('The upstream post API sent a next link without a valid cursor.')
  return next
}

/** The upstream refused the query's parameters (a column it lacks, no tags): the client's 400, with its detail. */
function relayedInvalidQuery (response: UpstreamResponse): ProblemError {
  let problem: unknown
  try {
    problem = sjson.parse(response.body.toString('utf8'), null, { protoAction: 'error', constructorAction: 'error' })
  } catch {}
  const { type, detail } = (typeof problem === 'object' && problem !== null ? problem : {}) as { type?: unknown, detail?: unknown }
  if (type !== `${PROBLEM_TYPE_BASE}invalid-query` || typeof detail !== 'string' || detail.length > MAX_RELAYED_DETAIL || !isStorableText(detail)) {
    return badResponse('The upstream post API answered with status 400.')
  }
  return new ProblemError('invalid-query', detail)
}

/** The outcomes every route maps the same way: 503 relayed, any other unexpected status 502. */
function unexpectedStatus (response: UpstreamResponse): ProblemError {
  if (response.status === 503) {
    const header = response.headers['retry-after']
    return new ProblemError('upstream-unavailable', 'The upstream post API is unavailable; try again shortly.', {
      retryAfter: typeof header === 'string' && RETRY_AFTER.test(header) ? header : DEFAULT_RETRY_AFTER_S
    })
  }
  return badResponse(`The upstream post API answered with status ${response.status}.`)
}

function strongEtag (header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && STRONG_ETAG.test(header) ? header : undefined
}
