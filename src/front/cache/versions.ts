// Confirming a held copy by its posts version (src/contract/posts-version.ts): a copy labelled
// with the version its upstream reads now is current. One version read at a time per upstream,
// shared by every request that arrived before it started, whatever each asked for. A version
// that does not match (the posts changed, or another post API process answered) only means the
// copy is revalidated by its ETag.
import { createCoalescer } from '../../lib/coalescer.js'
import { POSTS_VERSION_HEADER, versionIn } from '../../contract/posts-version.js'
import { ProblemError } from '../../contract/problems.js'
import type { UpstreamClient, UpstreamResponse } from '../upstream/client.js'
import type { TimedCall } from './timed-calls.js'

/** The upstream that answered, and the posts version it labelled its answer with. */
export interface VersionLabel {
  upstream: string
  value: string
}

export interface Confirmation {
  /** When the upstream last confirmed this copy (the cache's clock, ms). */
  validatedAt: number
  /** Set when the upstream labelled its answer with a posts version: confirmed by the version alone. */
  version: VersionLabel | undefined
}

/** The label of an answer, when the upstream sent a version. */
export function labelOf (response: UpstreamResponse): VersionLabel | undefined {
  const value = versionIn(response.headers[POSTS_VERSION_HEADER])
  return value === undefined ? undefined : { upstream: response.upstream, value }
}

export interface VersionConfirmer {
  /**
   * Whether `copy` is current, by its version label: its upstream reads the same version now, in
   * a read that started after this request arrived (shared with every request that arrived
   * meanwhile); `validatedAt` is then renewed. False when the version moved or cannot be read:
   * the copy must be revalidated. Rejects only when the read timed out (504).
   */
  confirmed: (copy: Confirmation & { version: VersionLabel }, requestId: string, wanted?: () => boolean) => Promise<boolean>
}

export interface VersionConfirmerOptions {
  upstream: UpstreamClient
  timed: TimedCall
  now: () => number
  /** Told each time a request joins a read another request started (the metrics). */
  joined?: () => void
}

export function createVersionConfirmer ({ upstream, timed, now, joined }: VersionConfirmerOptions): VersionConfirmer {
  const reads = createCoalescer<string | undefined>(joined)

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

  return {
    confirmed (copy, requestId, wanted) {
      const { upstream: from, value } = copy.version
      return reads.run(from, async () => await readVersion(from, requestId), wanted).then((read) => {
        if (read !== value) return false
        copy.validatedAt = now()
        return true
      })
    }
  }
}
