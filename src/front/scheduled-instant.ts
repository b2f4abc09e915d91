// The front's view of the next scheduled instant (src/contract/posts-schedule.ts): read off the
// posts version of every upstream answer and version read, which the front makes for each
// request it answers (a copy is confirmed by version, or revalidated, before it is served). The
// front caps its `Cache-Control` max-age with it, as the post API does.
import { scheduledInstantOf } from '../contract/posts-schedule.js'
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
  const seen = (version: string | undefined): void => {
    if (version !== undefined) next = scheduledInstantOf(version)
  }
  const watched: UpstreamClient = {
    async get (path, options) {
      const response = await upstream.get(path, options)
      seen(versionIn(response.headers[POSTS_VERSION_HEADER]))
      return response
    },
    async version (from, requestId) {
      const read = await upstream.version(from, requestId)
      seen(read?.version)
      return read
    },
    inRotation: () => upstream.inRotation()
  }
  return { upstream: watched, next: () => next }
}
