// What the front holds of upstream answers, all within CACHE_MAX_MB and counted in one LRU (the
// `front_cache_bytes` gauge), whatever clients ask: a copy per distinct query (path plus its
// parameters in canonical order), a body with the upstream's validator to revalidate it, or a
// post the upstream said does not exist when a version labels that answer (the one way to
// confirm it); and the page indexes of list shapes (page-indexes.ts), evicted like copies. When a
// call fails (502, 503, 504) and stale-if-error is on, a copy confirmed recently enough is served
// instead, flagged.
import { LRUCache } from 'lru-cache'
import { ProblemError } from '../../contract/problems.js'
import { heldSizeOf } from '../../http/representation.js'
import { countAgain } from '../../lib/lru-recount.js'
import type { CheckedBody } from './answer-checks.js'
import type { PageIndex } from './page-index.js'
import type { Confirmation, VersionLabel } from './versions.js'

/** A body, revalidated by its ETag when no version confirms it. */
export interface HeldBody extends CheckedBody, Confirmation {
  kind: 'body'
  upstreamEtag: string
}

/** A post the upstream said does not exist: held only under a version label. */
export interface HeldAbsence extends Confirmation {
  kind: 'absent'
  version: VersionLabel
}

export type HeldCopy = HeldBody | HeldAbsence

/** A page index held (keyed by its keyed list's path), confirmed by its version as a copy is. */
export interface HeldIndex extends Confirmation {
  kind: 'index'
  pages: PageIndex
  version: VersionLabel
}

/** A held copy served because the upstream failed with `status` (RFC 9211 `fwd-status`). */
export interface Stale { status: number }

/** The `Cache-Status` (RFC 9211) of an answer made from a copy served `stale`. */
export function staleCacheStatus ({ status }: Stale): string {
  return `blog-read-api; fwd=stale; fwd-status=${status}; detail=stale-if-error`
}

export interface HeldCopies {
  get: (path: string) => HeldCopy | undefined
  /** The body held for `path`, to revalidate; undefined when none (or an absence) is held. */
  body: (path: string) => HeldBody | undefined
  /** Holds `body` when it has the upstream's validator; forgets the copy otherwise (used once). */
  holdBody: (path: string, body: CheckedBody, upstreamEtag: string | undefined, version: VersionLabel | undefined) => void
  /** Holds the absence of a post when a version labels it; forgets the copy otherwise. */
  holdAbsence: (path: string, version: VersionLabel | undefined) => void
  /** The page index held for the keyed list at `path`. */
  index: (path: string) => HeldIndex | undefined
  /** Holds a page index, counted for its `memoryBytes`; one too large for the budget is not held. */
  holdIndex: (path: string, pages: PageIndex, version: VersionLabel) => void
  forget: (path: string) => void
  /** The body to serve instead of failing with `err` (stale-if-error), if one was confirmed recently enough. */
  staleFor: (path: string, err: unknown) => HeldBody | undefined
  /** The copies and page indexes held now, and the bytes they are counted for. */
  held: () => { copies: number, bytes: number }
  /** The budget in bytes. */
  readonly maxBytes: number
}

export interface HeldCopiesOptions {
  /** The budget in bytes (0: nothing is held). */
  cacheMaxBytes: number
  /** Seconds after its last confirmation a copy may be served in place of a failure (0: never). */
  staleIfErrorS: number
  now: () => number
}

/** Copies held at most, whatever their size: every distinct query is one, and clients choose queries. */
const MAX_HELD_COPIES = 10_000
/** What an absence is counted for. */
const ABSENCE_BYTES = 256

export function createHeldCopies ({ cacheMaxBytes, staleIfErrorS, now }: HeldCopiesOptions): HeldCopies {
  const maxBytes = Math.max(1, cacheMaxBytes) // 0 disables: nothing fits
  const copies = new LRUCache<string, HeldCopy | HeldIndex>({
    max: MAX_HELD_COPIES,
    maxSize: maxBytes,
    sizeCalculation: (held) => held.kind === 'body' ? heldSizeOf(held.representation) : held.kind === 'index' ? held.pages.memoryBytes : ABSENCE_BYTES
  })

  function body (path: string): HeldBody | undefined {
    const held = copies.get(path)
    return held?.kind === 'body' ? held : undefined
  }

  return {
    maxBytes,
    get (path) {
      const held = copies.get(path)
      return held?.kind === 'index' ? undefined : held
    },
    body,
    holdBody (path, checked, upstreamEtag, version) {
      if (upstreamEtag === undefined) {
        copies.delete(path)
        return
      }
      const held: HeldBody = { kind: 'body', ...checked, upstreamEtag, validatedAt: now(), version }
      copies.set(path, held)
      // A compressed variant made for a client later is counted then, evicting others if need be.
      held.representation.onGrown = () => { countAgain(copies, path, held) }
    },
    holdAbsence (path, version) {
      if (version === undefined) copies.delete(path)
      else copies.set(path, { kind: 'absent', validatedAt: now(), version })
    },
    index (path) {
      const held = copies.get(path)
      return held?.kind === 'index' ? held : undefined
    },
    holdIndex (path, pages, version) {
      if (pages.memoryBytes > maxBytes) copies.delete(path)
      else copies.set(path, { kind: 'index', pages, version, validatedAt: now() })
    },
    forget: (path) => { copies.delete(path) },
    staleFor (path, err) {
      if (staleIfErrorS <= 0 || !(err instanceof ProblemError) || err.status < 502) return undefined
      const copy = body(path)
      return copy === undefined || now() - copy.validatedAt > staleIfErrorS * 1000 ? undefined : copy
    },
    held: () => ({ copies: copies.size, bytes: copies.calculatedSize })
  }
}
