// The body of a webhook for a change, in the Standard Webhooks shape: a type, when it happened,
// and the data a receiver acts on (what to fetch again, what to drop, what to purge).
import { changePaths, changeCacheTags } from './cache-tags.js'
import type { Change } from './change.js'

export const WEBHOOK_TYPE = 'posts.changed'

/** `change`, observed at `occurredAtMs`, as the JSON text every attempt sends and signs. */
export function webhookBody (change: Change, occurredAtMs: number): string {
  return JSON.stringify({
    type: WEBHOOK_TYPE,
    timestamp: new Date(occurredAtMs).toISOString(),
    data: {
      since: change.since,
      until: change.until,
      upserted: change.upserted,
      deleted: change.deleted,
      cache_tags: changeCacheTags(change),
      paths: changePaths(change)
    }
  })
}
