// A post API as the sync tests drive it: over a test database, sending webhooks to a receiver of
// its own, its polls, heartbeats and retries on timers the test moves; and its JSON answers.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { ProcessMetrics } from '../../src/ops/metrics.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { PublishingOptions } from '../../src/publishing/publishing-options.js'
import type { WebhookSenderOptions } from '../../src/sync/webhook-sender.js'
import { testConfig } from './config.js'
import { openTestStore, type TestDatabase } from './databases.js'
import { createManualTimers, type ManualTimers } from './manual-timers.js'
import { pollUntil } from './poll.js'
import { listen, silentLogger, type RunningApp } from './tiers.js'
import { startReceiver, WEBHOOK_SECRET, type Receiver } from './webhook-receiver.js'

/** The answer's JSON, failing unless it is a 200 (with the body in the message). */
export async function getJson (url: string): Promise<any> {
  const response = await fetch(url)
  const text = await response.text()
  assert.equal(response.status, 200, text)
  return JSON.parse(text)
}

/**
 * Moves `timers` a poll period on once the poll before has ended. While a poll reads, the next is
 * not scheduled: moving the clock then would start none, and the one scheduled when it ends would
 * wait for a clock nobody moves again. Its next start being set (a timer due within the period:
 * heartbeats and webhook time-outs are seconds away) says it has ended.
 */
export async function advanceAfterPoll (timers: ManualTimers, periodMs: number): Promise<void> {
  await pollUntil('the poll before has ended', () => timers.dueWithin(periodMs))
  timers.advance(periodMs)
}

export interface WebhookPostsApi {
  posts: RunningApp
  /** The sync route's URL. */
  changes: string
  receiver: Receiver
  timers: ManualTimers
}

export interface WebhookPostsApiOptions {
  /** The publishing rule (PUBLISHED_ONLY); its clock is the post API's too. */
  publishing?: PublishingOptions
  /** Where the manual timers start (default: now). */
  startMs?: number
  metrics?: ProcessMetrics
  webhookOptions?: Partial<WebhookSenderOptions>
}

/** A post API over `database` (migrated already), webhooks to a receiver of its own, on manual timers; closed after the test. */
export async function startWebhookPostsApi (t: TestContext, database: TestDatabase, { publishing, startMs, metrics, webhookOptions }: WebhookPostsApiOptions = {}): Promise<WebhookPostsApi> {
  const store = await openTestStore(database.location, { publishing })
  await store.checkSchema()
  const receiver = await startReceiver(t)
  const timers = createManualTimers(startMs)
  const now = publishing?.now
  const options = postsAppOptions(testConfig({ WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET }), { store, logger: silentLogger, metrics, ...(now === undefined ? {} : { now }) })
  const posts = await listen(buildPostsApp({ ...options, sync: { ...options.sync, timers, webhookOptions } }))
  t.after(async () => { await posts.app.close(); await store.close() })
  return { posts, changes: `${posts.url}/api/posts/changes`, receiver, timers }
}
