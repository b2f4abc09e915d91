// Webhooks from a post API over a real store: a commit is POSTed once, signed as the Standard
// Webhooks library verifies (tampering and replays refused); a receiver failing gets retries on
// the back-off (injected timers) and the metrics count them. (A write that changes nothing sends
// nothing: unchanged-writes.test.ts, on every store.)
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { parseWebhookSecret } from '../../src/sync/webhook-signature.js'
import { createSeededSqlite } from '../helpers/databases.js'
import type { ManualTimers } from '../helpers/manual-timers.js'
import { pollUntil } from '../helpers/poll.js'
import { getJson, startWebhookPostsApi } from '../helpers/sync-posts-api.js'
import { WEBHOOK_SECRET, type Receiver } from '../helpers/webhook-receiver.js'

interface Fixture { timers: ManualTimers, receiver: Receiver, exec: (sql: string) => Promise<void>, scrape: () => Promise<string> }

async function startWebhookPostApi (t: TestContext): Promise<Fixture> {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  const metrics = createProcessMetrics()
  const { changes, receiver, timers } = await startWebhookPostsApi(t, database, { metrics, webhookOptions: { random: () => 1 } })
  // The state before any write: observed now, so that the writes below are changes.
  await getJson(changes)
  return { timers, receiver, exec: database.exec, scrape: async () => await metrics.scrape() }
}

test('a commit is one signed webhook; tampering and replays are refused', async (t) => {
  const { timers, receiver, exec } = await startWebhookPostApi(t)
  await exec("UPDATE posts SET title = 'Edited' WHERE slug = 'hello-world'")
  const arrival = receiver.next()
  timers.advance(200)
  const { headers, body } = await arrival
  const library = new Webhook(WEBHOOK_SECRET)
  const payload = library.verify(body, headers as Record<string, string>) as { type: string, data: Record<string, unknown> }
  assert.equal(payload.type, 'posts.changed')
  assert.deepEqual(payload.data.upserted, ['hello-world'])
  assert.deepEqual(payload.data.deleted, [])
  assert.equal(headers['webhook-id'], payload.data.until, 'the id is the change\'s token')
  assert.deepEqual(payload.data.cache_tags, ['posts', 'post-hello-world'])
  assert.ok((payload.data.paths as string[]).includes('/api/blog/hello-world'))
  assert.throws(() => library.verify(body.replace('hello-world', 'other-post'), headers as Record<string, string>), 'a tampered body')
  const stale = { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) } as unknown as Record<string, string>
  assert.throws(() => library.verify(body, stale), 'a replay an hour later')
  assert.equal(parseWebhookSecret(WEBHOOK_SECRET).length, 32)
})

test('a receiver answering 500 gets retries on the back-off until it accepts; the metrics count them', async (t) => {
  const { timers, receiver, exec, scrape } = await startWebhookPostApi(t)
  receiver.failNext(500, 500)
  await exec("UPDATE posts SET title = 'Retried' WHERE slug = 'hello-world'")
  let arrival = receiver.next()
  timers.advance(200)
  const first = await arrival
  // Retries after 5 s, then 10 s (the jitter's upper end, random() = 1), each once the sender
  // has counted the failure (and set its timer).
  for (const [failures, waitMs] of [[1, 5000], [2, 10_000]] as const) {
    await pollUntil('the failure counted', async () => new RegExp(`^blog_read_api_webhook_failed_attempts_total ${failures}$`, 'm').test(await scrape()))
    arrival = receiver.next()
    timers.advance(waitMs)
    const retry = await arrival
    assert.equal(retry.body, first.body, 'the same payload')
    assert.equal(retry.headers['webhook-id'], first.headers['webhook-id'])
  }
  assert.equal(receiver.deliveries.length, 3)
  const text = await pollUntil('the delivery counted', async () => { const scraped = await scrape(); return /^blog_read_api_webhook_deliveries_total 1$/m.test(scraped) && scraped })
  assert.match(text, /^blog_read_api_webhook_failed_attempts_total 2$/m)
  assert.match(text, /^blog_read_api_webhook_pending 0$/m)
})
