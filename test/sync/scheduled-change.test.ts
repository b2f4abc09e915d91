// A scheduled post's instant is a change, on every store: under PUBLISHED_ONLY (an injected
// clock), a post inserted for later changes nothing; once the clock passes its instant, with
// nothing written, the stream carries an event and the webhook receiver gets a delivery, each
// naming the post as upserted since the state before.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SERVERS, seedTestStore } from '../helpers/databases.js'
import { openStreamClient } from '../helpers/sse-client.js'
import { advanceAfterPoll, getJson, startWebhookPostsApi } from '../helpers/sync-posts-api.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const MINUTE = 60_000
/** SYNC_POLL_MS's default: every store has polled once after it. */
const POLL_MS = 1000

for (const [name, server] of SERVERS) {
  test(`${name}: a scheduled post's instant passing is an event and a webhook, with nothing written`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    let clock = NOW
    const { changes, receiver, timers } = await startWebhookPostsApi(t, database, { publishing: { publishedOnly: true, now: () => clock }, startMs: NOW })
    const { until: before } = await getJson(changes)
    const stream = await openStreamClient(changes)
    t.after(() => stream.close())
    await stream.waitFor((event) => event.lastEventId === before)

    const at = new Date(NOW + MINUTE).toISOString()
    await database.exec(`INSERT INTO posts (slug, title, content, tags, published_at) VALUES ('soon', 'Soon', 'Body', '[]', '${name.startsWith('MySQL') ? at.slice(0, 23).replace('T', ' ') : at}')`)
    await advanceAfterPoll(timers, POLL_MS)
    assert.deepEqual(await getJson(`${changes}?since=${before}`), { since: before, until: before, upserted: [], deleted: [] }, 'hidden until its instant')

    clock += 2 * MINUTE
    const delivery = receiver.next()
    await advanceAfterPoll(timers, POLL_MS)
    const { data } = JSON.parse((await delivery).body)
    assert.deepEqual([data.since, data.upserted, data.deleted], [before, ['soon'], []])
    const event = await stream.waitFor((e) => e.data !== undefined)
    assert.deepEqual(JSON.parse(event.data ?? ''), { since: before, until: data.until, upserted: ['soon'], deleted: [] })
    assert.equal(receiver.deliveries.length, 1, 'the hidden insert sent nothing')
  })
}
