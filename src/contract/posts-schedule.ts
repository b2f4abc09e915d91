// Scheduled posts and freshness, as both tiers agree on them. A posts version (posts-version.ts)
// may end with `~` and the next scheduled instant in ms since the epoch: the instant at which a
// post hidden by its date becomes public, so the version moves then with no write to the store.
// Each tier caps its `Cache-Control` max-age at the seconds left until that instant, so no cache
// downstream keeps an answer past it. A store without change tracking has no version: the post
// API then names the instant in SCHEDULED_HEADER, on every answer it applies to.

const SEPARATOR = '~'

/** Response header of the post API: the next scheduled instant, in ms since the epoch (absent: none). */
export const SCHEDULED_HEADER = 'posts-scheduled-at'

/** The instant a SCHEDULED_HEADER value names, or undefined. */
export function scheduledInstantIn (header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !/^\d{1,16}$/.test(header)) return undefined
  const instant = Number(header)
  return Number.isSafeInteger(instant) ? instant : undefined
}

/** `token` labelled with `instantMs` (undefined: nothing is scheduled, the token as it is). */
export function withScheduledInstant (token: string, instantMs: number | undefined): string {
  return instantMs === undefined ? token : `${token}${SEPARATOR}${instantMs}`
}

/** The next scheduled instant a version names, or undefined. */
export function scheduledInstantOf (version: string | undefined): number | undefined {
  if (version === undefined) return undefined
  const at = version.lastIndexOf(SEPARATOR)
  if (at === -1) return undefined
  const instant = Number(version.slice(at + 1))
  return Number.isSafeInteger(instant) ? instant : undefined
}

const MAX_AGE = /\b(s-maxage|max-age)\s*=\s*"?(\d+)"?/gi

/**
 * `cacheControl` with each max-age and s-maxage at most the whole seconds left from `nowMs` until
 * `instantMs` (rounded down: a cache must not keep an answer past the instant).
 */
export function capMaxAge (cacheControl: string, instantMs: number | undefined, nowMs: number): string {
  if (instantMs === undefined) return cacheControl
  const left = Math.max(0, Math.floor((instantMs - nowMs) / 1000))
  return cacheControl.replace(MAX_AGE, (whole, name: string, seconds: string) => Number(seconds) > left ? `${name}=${left}` : whole)
}
