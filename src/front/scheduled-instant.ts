// The front's view of the next scheduled instant (src/contract/posts-schedule.ts): read off the
// posts version (or the scheduled-instant header) of every upstream answer and version read, which the front makes for each
// request it answers (a copy is confirmed by version, or revalidated, before it is served). The
// front caps its `Cache-Control` max-age with it, as the post API does.
import { SCHEDULED_HEADER, scheduledInstantIn, scheduledInstantOf } from '../contract/posts-schedule.js'
import { POSTS_VERSION_HEADER, versionIn } from '../contract/posts-version.js'
import type { UpstreamClient } from './upstream/client.js'

export interface ScheduleWatch {
  /** `upstream`, each answer's version read on the way. */
  upstream: UpstreamClient
  /** The next scheduled instant the latest version named (undefined: none). */
  next: () => number | undefined
}

export function watchScheduledInstant (upstream: UpstreamClient): ScheduleWatch {
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
  return { upstream: watched, next: () => next }
}
