// A write that changes nothing sends nothing, on every store: rows rewritten with the values they
// hold (which moves PostgreSQL's `xmin` and every store's change token) give no webhook, no event
// and an empty delta naming the same state; the next real change starts from that state.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SERVERS, seedTestStore } from '../helpers/databases.js'
import { openStreamClient } from '../helpers/sse-client.js'
import { advanceAfterPoll, getJson, startWebhookPostsApi } from '../helpers/sync-posts-api.js'

/** SYNC_POLL_MS's default: every store has polled once after it (the token-tracking ones every 200 ms). */
const POLL_MS = 1000

for (const [name, server] of SERVERS) {
  test(`${name}: rows rewritten as they were send no webhook and no event, and the delta names the same state`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    const { changes, receiver, timers } = await startWebhookPostsApi(t, database)
    const { until: before } = await getJson(changes)
    const stream = await openStreamClient(changes)
    t.after(() => stream.close())
    assert.equal((await stream.waitFor((event) => event.lastEventId !== '')).lastEventId, before)

    await database.exec('UPDATE posts SET title = title, content = content')
    await advanceAfterPoll(timers, POLL_MS)
    assert.deepEqual(await getJson(`${changes}?since=${before}`), { since: before, until: before, upserted: [], deleted: [] })
    assert.equal((await getJson(changes)).until, before, 'the whole list names the same state')

    // The next change is the first thing sent, and starts from the state before the rewrite.
    await database.exec("DELETE FROM posts WHERE slug = 'hello-world'")
    const delivery = receiver.next()
    await advanceAfterPoll(timers, POLL_MS)
    const { data } = JSON.parse((await delivery).body)
    assert.equal(data.since, before)
    assert.deepEqual([data.upserted, data.deleted], [[], ['hello-world']])
    const event = await stream.waitFor((e) => e.data !== undefined)
    assert.equal(JSON.parse(event.data ?? '').since, before)
    assert.equal(receiver.deliveries.length, 1, 'the rewrite sent nothing')
    assert.equal(stream.events.filter((e) => e.data !== undefined).length, 1, 'the rewrite was no event')
  })
}
