// The post API's sync, put together: the states observed over the store (src/sync/posts-sync.ts),
// the webhooks each change is sent to (src/sync/webhook-sender.ts), and their metrics.
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { registerWebhookMetrics } from '../ops/webhook-metrics.js'
import type { PostStore } from '../store/store.js'
import { createPostsSync, type PostsSync } from '../sync/posts-sync.js'
import type { Timers } from '../lib/timers.js'
import { createWebhookSender, type WebhookSenderOptions } from '../sync/webhook-sender.js'

/** SYNC_POLL_MS's default: a store without a change token reads every row this often while polling. */
export const DEFAULT_SYNC_POLL_MS = 1000

export interface SyncSettings {
  /** SYNC_POLL_MS. */
  pollMs?: number
  /** WEBHOOK_URLS, and the key of WEBHOOK_SECRET (parseWebhookSecret); no URLs: no webhooks. */
  webhooks?: { urls: readonly string[], keys: readonly Buffer[] }
  /** Polls, heartbeats and webhook retries (tests move them by hand). */
  timers?: Timers
  /** The webhook sender's own options (tests: short time-outs, a fixed random). */
  webhookOptions?: Partial<WebhookSenderOptions>
}

export interface SyncParts {
  /** The store as the post API reads it (row versions and tracking). */
  store: PostStore
  /** The posts version now (post-bodies' coalesced token read). */
  version: () => Promise<string | undefined>
  logger: Logger
  /** Where the webhook metrics go (METRICS on). */
  registry?: Registry
  settings: SyncSettings
}

export function startPostsSync ({ store, version, logger, registry, settings }: SyncParts): PostsSync {
  const { webhooks, timers } = settings
  const sender = webhooks === undefined || webhooks.urls.length === 0
    ? undefined
    : createWebhookSender({
      ...settings.webhookOptions,
      urls: webhooks.urls,
      keys: webhooks.keys,
      timers,
      onAttempt (attempt) {
        if (!attempt.delivered) logger.warn({ url: attempt.url, id: attempt.id, status: attempt.status, err: attempt.error, next: attempt.next }, 'webhook delivery failed')
      }
    })
  if (sender !== undefined && registry !== undefined) registerWebhookMetrics(registry, sender)
  const sync = createPostsSync({
    version,
    readRowVersions: () => store.readRowVersions(),
    tracksChanges: store.tracksChanges,
    pollMs: settings.pollMs ?? DEFAULT_SYNC_POLL_MS,
    alwaysPoll: sender !== undefined,
    onChange: sender === undefined ? undefined : (change) => sender.send(change),
    onPollError: (err) => logger.warn({ err }, 'sync could not read the posts\' state; trying again at the next poll'),
    timers
  })
  return {
    ...sync,
    close () {
      sync.close()
      sender?.close()
    }
  }
}
