// Webhooks against receivers on loopback: signatures checked by the Standard Webhooks library,
// tampering and replays refused, failed deliveries retried for an hour of a manual clock, memory
// bounded by folding, and a change that changes nothing sending nothing.
import assert from 'node:assert/strict'
import type { IncomingHttpHeaders } from 'node:http'
import { test, type TestContext } from 'node:test'
import fc from 'fast-check'
import { request } from 'undici'
import { Webhook } from 'standardwebhooks'
import type { Change } from '../../src/sync/change.js'
import { stateToken } from '../../src/sync/state-token.js'
import { createStateTracker } from '../../src/sync/state-tracker.js'
import { createWebhookSender, WEBHOOK_DEFAULTS, type AttemptOutcome, type WebhookSenderOptions } from '../../src/sync/webhook-sender.js'
import { parseWebhookSecret, signWebhook } from '../../src/sync/webhook-signature.js'
import { createManualTimers } from '../helpers/manual-timers.js'
import { startReceiver, WEBHOOK_SECRET, type Delivery, type Receiver } from '../helpers/webhook-receiver.js'

const KEY = parseWebhookSecret(WEBHOOK_SECRET)
const library = new Webhook(WEBHOOK_SECRET)
/** A receiver as the specification asks one to be: verified by its library, stale timestamps refused, duplicate ids dropped. */
const VERIFIED = { verify: (body: string, headers: IncomingHttpHeaders) => library.verify(body, headers as Record<string, string>) }

/** The outcomes of attempts, awaited one at a time. */
function attempts (): { onAttempt: (outcome: AttemptOutcome) => void, next: () => Promise<AttemptOutcome> } {
  const ready: AttemptOutcome[] = []
  const waiting: Array<(outcome: AttemptOutcome) => void> = []
  return {
    onAttempt: (outcome) => {
      const waiter = waiting.shift()
      if (waiter === undefined) ready.push(outcome)
      else waiter(outcome)
    },
    next: () => {
      const outcome = ready.shift()
      return outcome === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(outcome)
    }
  }
}

/** Changes of a growing table: post-1, then post-2, … each state one post longer. */
function growingChanges (count: number): { changes: Change[], finalSlugs: string[] } {
  const tracker = createStateTracker()
  const versions = new Map<string, string>()
  tracker.observe(new Map(versions))
  const changes: Change[] = []
  for (let i = 1; i <= count; i++) {
    versions.set(`post-${i}`, 'v1')
    if (i % 3 === 0) versions.delete(`post-${i - 1}`)
    changes.push(tracker.observe(new Map(versions)).change as Change)
  }
  return { changes, finalSlugs: [...versions.keys()].sort() }
}

/** A receiver's copy after applying the deltas it accepted, in order. */
function copyFrom (accepted: Receiver['accepted']): string[] {
  const copy = new Set<string>()
  for (const { payload } of accepted) {
    for (const slug of payload.data.deleted) copy.delete(slug)
    for (const slug of payload.data.upserted) copy.add(slug)
  }
  return [...copy].sort()
}

function sender (t: TestContext, options: Partial<WebhookSenderOptions> & Pick<WebhookSenderOptions, 'urls'>): ReturnType<typeof createWebhookSender> {
  const created = createWebhookSender({ keys: [KEY], ...options })
  t.after(() => created.close())
  return created
}

test('a delivery carries the change in the Standard Webhooks shape, signed so that the specification\'s library accepts it', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t, VERIFIED)
  const log = attempts()
  const { changes } = growingChanges(1)
  const change = changes[0] as Change
  const webhooks = sender(t, { urls: [receiver.url], onAttempt: log.onAttempt })
  webhooks.send(change)
  assert.deepEqual(await log.next(), { url: receiver.url, id: change.until, status: 204, delivered: true })
  const [{ id, payload }] = receiver.accepted as [Receiver['accepted'][number]]
  assert.equal(id, change.until)
  assert.equal(payload.type, 'posts.changed')
  assert.ok(Math.abs(Date.parse(payload.timestamp) - Date.now()) < 60_000, payload.timestamp)
  assert.deepEqual(payload.data, {
    since: change.since,
    until: change.until,
    upserted: ['post-1'],
    deleted: [],
    cache_tags: ['posts', 'post-post-1'],
    paths: ['/api/blog', '/api/tags', '/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml', '/api/blog/post-1']
  })
  assert.equal((receiver.deliveries[0] as Delivery).headers['content-type'], 'application/json')
  assert.deepEqual(webhooks.stats(), { delivered: 1, failedAttempts: 0, gaveUp: 0, folded: 0, pending: 0 })
})

test('the receiver refuses a tampered body, another secret, a stale timestamp, and drops a replayed id', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t, VERIFIED)
  const { changes } = growingChanges(1)
  const change = changes[0] as Change
  const log = attempts()
  sender(t, { urls: [receiver.url], onAttempt: log.onAttempt }).send(change)
  await log.next()
  const original = receiver.deliveries[0] as Delivery
  const replay = async (body: string, headers: Record<string, string>): Promise<number> =>
    (await request(receiver.url, { method: 'POST', body, headers })).statusCode
  const signed = (body: string, timestampS: number, keys = [KEY]): Record<string, string> => ({ ...signWebhook(keys, change.until, timestampS, body) })
  const now = Math.floor(Date.now() / 1000)
  const tampered = original.body.replace('post-1', 'post-2')
  assert.equal(await replay(tampered, { ...original.headers as Record<string, string> }), 400, 'a changed body')
  assert.equal(await replay(original.body, signed(original.body, now, [parseWebhookSecret(`whsec_${Buffer.alloc(32, 8).toString('base64')}`)])), 400, 'another secret')
  assert.equal(await replay(original.body, signed(original.body, now - 6 * 60)), 400, 'six minutes old')
  assert.equal(await replay(original.body, signed(original.body, now + 6 * 60)), 400, 'six minutes ahead')
  assert.equal(await replay(original.body, original.headers as Record<string, string>), 204, 'an exact replay within the window verifies…')
  assert.equal(receiver.accepted.length, 1, '…and is dropped by its id')
})

test('signatures equal the library\'s for any id, time and body; several keys sign side by side', () => {
  fc.assert(fc.property(fc.stringMatching(/^[\w-]{1,40}$/), fc.integer({ min: 0, max: 2 ** 33 }), fc.string({ unit: 'grapheme' }), (id, timestampS, body) => {
    const ours = signWebhook([KEY], id, timestampS, body)['webhook-signature']
    assert.equal(ours, library.sign(id, new Date(timestampS * 1000), body))
  }), { numRuns: 500 })
  const other = parseWebhookSecret(`whsec_${Buffer.alloc(24, 1).toString('base64')}`)
  const both = signWebhook([KEY, other], 'id', 1, 'body')['webhook-signature'].split(' ')
  assert.deepEqual(both, [signWebhook([KEY], 'id', 1, 'body')['webhook-signature'], signWebhook([other], 'id', 1, 'body')['webhook-signature']])
})

test('a webhook secret is whsec_ and base64 of 24 to 64 bytes; errors never echo it', () => {
  assert.equal(parseWebhookSecret(WEBHOOK_SECRET).length, 32)
  for (const bad of ['abc', `whsec_${'x'.repeat(31)}!`, `whsec_${Buffer.alloc(16).toString('base64')}`, `whsec_${Buffer.alloc(65).toString('base64')}`, 'whsec_', `whsec_${Buffer.alloc(32).toString('base64url')}-_`]) {
    assert.throws(() => parseWebhookSecret(bad), (err: Error) => err instanceof RangeError && !err.message.includes(bad.slice(6, 20) || '\0'), bad)
  }
})

test('a receiver answering 500 gets retries with doubling, jittered waits for an hour, each freshly signed, then the delivery is dropped', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t)
  receiver.answer(500)
  const timers = createManualTimers()
  const log = attempts()
  let draws = 0
  const webhooks = sender(t, { urls: [receiver.url], timers, random: () => (draws++ % 5) / 5, onAttempt: log.onAttempt })
  const { changes } = growingChanges(1)
  const queuedAt = timers.now()
  webhooks.send(changes[0] as Change)
  const times: number[] = []
  for (;;) {
    const outcome = await log.next()
    times.push(timers.now())
    assert.equal(outcome.status, 500)
    if (outcome.next === 'give-up') break
    assert.equal(outcome.next, 'retry')
    assert.equal(timers.pending(), 1, 'one retry waits, and nothing else')
    assert.ok(timers.next())
  }
  assert.ok((times.at(-1) as number) - queuedAt >= WEBHOOK_DEFAULTS.retryForMs, 'retried for at least an hour')
  assert.ok((times.at(-2) as number) - queuedAt < WEBHOOK_DEFAULTS.retryForMs, 'and given up at the first failure after that')
  for (let i = 1; i < times.length; i++) {
    const ceiling = Math.min(WEBHOOK_DEFAULTS.maxRetryMs, WEBHOOK_DEFAULTS.firstRetryMs * 2 ** (i - 1))
    const waited = (times[i] as number) - (times[i - 1] as number)
    assert.ok(waited >= ceiling / 2 && waited <= ceiling, `wait ${i}: ${waited} ms within [${ceiling / 2}, ${ceiling}]`)
  }
  assert.ok(new Set(times.slice(1).map((time, i) => time - (times[i] as number))).size > 3, 'the waits are jittered')
  // Every attempt is signed at its own time: a receiver never sees an hour-old timestamp.
  receiver.deliveries.forEach(({ headers, body }, i) => {
    const timestampS = Number(headers['webhook-timestamp'])
    assert.equal(timestampS, Math.floor((times[i] as number) / 1000))
    assert.equal(headers['webhook-signature'], library.sign(headers['webhook-id'] as string, new Date(timestampS * 1000), body))
  })
  assert.equal(receiver.deliveries.length, times.length)
  assert.equal(timers.pending(), 0, 'nothing scheduled after giving up')
  assert.deepEqual(webhooks.stats(), { delivered: 0, failedAttempts: times.length, gaveUp: 1, folded: 0, pending: 0 })
})

test('a receiver that recovers gets every change in order; a time-out and Retry-After count', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t)
  const timers = createManualTimers()
  const log = attempts()
  const webhooks = sender(t, { urls: [receiver.url], timers, random: () => 1, onAttempt: log.onAttempt })
  const { changes, finalSlugs } = growingChanges(5)
  receiver.answer('hang')
  const arrived = receiver.next()
  for (const change of changes) webhooks.send(change)
  await arrived
  timers.advance(WEBHOOK_DEFAULTS.timeoutMs)
  const timedOut = await log.next()
  assert.equal(timedOut.status, undefined)
  assert.match(String(timedOut.error), /no answer within 15000 ms/)
  assert.equal(timedOut.next, 'retry')
  receiver.answer({ status: 503, retryAfter: '120' })
  const before = timers.now()
  assert.ok(timers.next())
  assert.equal(timers.now() - before, WEBHOOK_DEFAULTS.firstRetryMs, 'the first retry waits the first step')
  assert.equal((await log.next()).status, 503)
  const beforeRetryAfter = timers.now()
  receiver.answer(200)
  assert.ok(timers.next())
  assert.equal(timers.now() - beforeRetryAfter, 120_000, 'Retry-After, longer than the back-off, is honoured')
  for (let i = 0; i < changes.length; i++) assert.equal((await log.next()).delivered, true)
  assert.deepEqual(receiver.accepted.map(({ id }) => id), changes.map((change) => change.until), 'in order')
  assert.deepEqual(copyFrom(receiver.accepted), finalSlugs)
  assert.deepEqual(webhooks.stats(), { delivered: 5, failedAttempts: 2, gaveUp: 0, folded: 0, pending: 0 })
})

test('beyond the cap, changes fold into the newest waiting delivery: memory stays bounded and the receiver still ends exact', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t)
  receiver.answer(500)
  const timers = createManualTimers()
  const log = attempts()
  const webhooks = sender(t, { urls: [receiver.url], timers, random: () => 1, maxPending: 3, onAttempt: log.onAttempt })
  const { changes, finalSlugs } = growingChanges(12)
  for (const change of changes) {
    webhooks.send(change)
    assert.ok(webhooks.stats().pending <= 3)
  }
  assert.equal((await log.next()).next, 'retry')
  assert.deepEqual(webhooks.stats(), { delivered: 0, failedAttempts: 1, gaveUp: 0, folded: 9, pending: 3 })
  receiver.answer(200)
  assert.ok(timers.next())
  for (let i = 0; i < 3; i++) assert.equal((await log.next()).delivered, true)
  assert.equal(receiver.accepted.at(-1)?.id, changes.at(-1)?.until, 'the folded delivery is named by the newest token')
  assert.equal(receiver.accepted.at(-1)?.payload.data.since, changes[2]?.since)
  assert.deepEqual(copyFrom(receiver.accepted), finalSlugs)
  assert.throws(() => createWebhookSender({ urls: [], keys: [KEY], maxPending: 1 }), RangeError)
})

test('410 Gone stops deliveries to that URL only', { timeout: 60_000 }, async (t) => {
  const gone = await startReceiver(t, VERIFIED)
  const kept = await startReceiver(t, VERIFIED)
  gone.answer(410)
  const log = attempts()
  const webhooks = sender(t, { urls: [gone.url, kept.url], onAttempt: log.onAttempt })
  const { changes } = growingChanges(3)
  webhooks.send(changes[0] as Change)
  const outcomes = [await log.next(), await log.next()]
  assert.deepEqual(outcomes.map((o) => o.next ?? 'delivered').sort(), ['delivered', 'disabled'])
  webhooks.send(changes[1] as Change)
  assert.equal((await log.next()).url, kept.url)
  assert.equal(gone.deliveries.length, 1)
  assert.equal(kept.accepted.length, 2)
})

test('a change that changes nothing sends nothing, at the tracker and at the sender', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t, VERIFIED)
  const timers = createManualTimers()
  const webhooks = sender(t, { urls: [receiver.url], timers })
  const tracker = createStateTracker()
  const state = new Map([['a', '1']])
  tracker.observe(state)
  const token = stateToken(state)
  const unchanged = tracker.observe(new Map(state)).change
  assert.equal(unchanged, undefined)
  webhooks.send({ since: token, until: token, upserted: [], deleted: [] })
  webhooks.send({ since: token, until: stateToken(new Map()), upserted: [], deleted: [] })
  assert.equal(timers.pending(), 0, 'no attempt started')
  assert.deepEqual(webhooks.stats(), { delivered: 0, failedAttempts: 0, gaveUp: 0, folded: 0, pending: 0 })
  assert.equal(receiver.deliveries.length, 0)
})
