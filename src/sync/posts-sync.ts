// The post API's side of sync: the states it observes, one after the other, as changes in one
// log (the hub's), which the deltas, the stream and the webhooks all answer from.
//
// Exact and cheap: the row versions are read again only when the posts version (the store's
// change token, labelled with the next scheduled instant: src/contract/posts-version.ts) moved
// since they were last read, so a delta or a poll between two commits costs one token read.
// A store without a token (MySQL/MariaDB) reads every row's version for each request, never
// answering from a read that started before the request arrived (concurrent requests and polls
// share one). The versions read after a token are at least as new as it, so a state kept under
// a token is never older than the token says.
//
// While someone follows the stream, or webhooks are configured, the state is polled
// (src/sync/poll-schedule.ts): every TOKEN_POLL_MS where the token is cheap, every `pollMs`
// (SYNC_POLL_MS) where each poll reads every row.
import { createCoalescer } from '../lib/coalescer.js'
import type { Change } from './change.js'
import { createChangeHub, type ChangeHub } from './change-hub.js'
import { createPollSchedule } from './poll-schedule.js'
import type { RowVersions } from './state-token.js'
import { createStateTracker } from './state-tracker.js'
import { realTimers, type Timers } from '../lib/timers.js'

/** Between two reads of the change token while polling: an event follows a commit within a second. */
export const TOKEN_POLL_MS = 200

export interface PostsSyncOptions {
  /** The posts version now, read after this call (undefined: the store cannot tell). */
  version: () => Promise<string | undefined>
  /** Slug → row version of every post served now (PostStore.readRowVersions). */
  readRowVersions: () => Promise<RowVersions>
  /** Whether `version` can answer: polls then read the token every TOKEN_POLL_MS, else every row every `pollMs`. */
  tracksChanges: boolean
  /** SYNC_POLL_MS. */
  pollMs: number
  /** Told of every change observed, in order (the webhooks). */
  onChange?: (change: Change) => void
  /** Told when a poll fails (the log); the next poll tries again. */
  onPollError?: (err: unknown) => void
  /** Poll even without subscribers (webhooks are configured). */
  alwaysPoll?: boolean
  timers?: Timers
}

export interface PostsSync {
  /** Every subscriber of the stream; its log answers the deltas. */
  readonly hub: ChangeHub
  /** The token of the state now, observing it (and what changed) when it moved. */
  current: () => Promise<string>
  /** The change from `token` to the state last observed, or undefined when this process does not hold `token`. */
  since: (token: string) => Change | undefined
  /** The row versions of the state last observed, when `token` names it (what a delta leading there must carry). */
  versionsOf: (token: string) => RowVersions | undefined
  /**
   * Observes the state again unless `token` (the state of posts just read, after `current`) is
   * held, so that a client's next `since` from it can be answered.
   */
  hold: (token: string) => Promise<void>
  /** Stops polling and ends every stream. */
  close: () => void
}

export function createPostsSync (options: PostsSyncOptions): PostsSync {
  const timers = options.timers ?? realTimers
  const tracker = createStateTracker()
  const reads = createCoalescer<string>()
  let known: { version: string, token: string } | undefined
  let subscribed = false

  const schedule = createPollSchedule({
    periodMs: options.tracksChanges ? Math.min(TOKEN_POLL_MS, options.pollMs) : options.pollMs,
    timers,
    poll: async () => { await current().catch((err: unknown) => options.onPollError?.(err)) }
  })
  const polled = (): boolean => subscribed || options.alwaysPoll === true

  const hub = createChangeHub({
    timers,
    onActiveChange (active) {
      subscribed = active
      schedule.setWanted(polled())
    }
  })
  schedule.setWanted(polled())

  async function observe (version: string | undefined): Promise<string> {
    const { token, change } = tracker.observe(await options.readRowVersions())
    if (hub.log.head === undefined) hub.reset(token)
    else if (change !== undefined) {
      hub.publish(change)
      options.onChange?.(change)
    }
    if (version !== undefined) known = { version, token }
    return token
  }

  async function current (): Promise<string> {
    const version = await options.version()
    if (version !== undefined && known?.version === version) return known.token
    // One read of the versions at a time, in order (the tracker compares each with the last).
    return await reads.run('versions', async () => await observe(version))
  }

  return {
    hub,
    current,
    since: (token) => hub.log.since(token),
    versionsOf: (token) => tracker.token === token ? tracker.versions : undefined,
    async hold (token) {
      if (hub.log.since(token) === undefined) await current()
    },
    close () {
      schedule.close()
      hub.close()
    }
  }
}
