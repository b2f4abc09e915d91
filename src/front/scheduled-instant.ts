// The front's view of the next scheduled instant (src/contract/posts-schedule.ts): read off the
// posts version (or the scheduled-instant header) of every upstream answer and version read, which the front makes for each
// request it answers (a copy is confirmed by version, or revalidated, before it is served). The
// `Cache-Control` of every answer made from the posts is capped with it here, as the post API
// caps its own: the one place the front reads CACHE_CONTROL, so that no route can send it uncapped.
import { capMaxAge, SCHEDULED_HEADER, scheduledInstantIn, scheduledInstantOf } from '../contract/posts-schedule.js'
import { POSTS_VERSION_HEADER, versionIn } from '../contract/posts-version.js'
import type { UpstreamClient } from './upstream/client.js'

export interface ScheduleWatch {
  /** `upstream`, each answer's version read on the way. */
  upstream: UpstreamClient
  /**
   * The `Cache-Control` of an answer made from the posts and sent now: CACHE_CONTROL with its
   * max-age and s-maxage capped at the seconds left until the next scheduled instant the latest
   * version named.
   */
  cacheControlNow: () => string
}

export interface ScheduleWatchOptions {
  /** CACHE_CONTROL. */
  cacheControl: string
  now: () => number
}

export function watchScheduledInstant (upstream: UpstreamClient, { cacheControl, now }: ScheduleWatchOptions): ScheduleWatch {
  let next: number | undefined
  /** `named`: the answer names the instant if there is one (a version, or a 200 or 304, which carry the header when one is due). */
  const seen = (version: string | undefined, header: string | string[] | undefined, named: boolean): void => {
    if (named || version !== undefined) next = scheduledInstantIn(header) ?? scheduledInstantOf(version)
  }
  const watched: UpstreamClient = {
    async get (path, options) {
      const response = await upstream.get(path, options)
      seen(versionIn(response.headers[POSTS_VERSION_HEADER]), response.headers[SCHEDULED_HEADER], response.status === 200 || response.status === 304)
      return response
    },
    async version (from, requestId) {
      const read = await upstream.version(from, requestId)
      seen(read?.version, undefined, false)
      return read
    },
    inRotation: () => upstream.inRotation()
  }
  return { upstream: watched, cacheControlNow: () => capMaxAge(cacheControl, next, now()) }
}
