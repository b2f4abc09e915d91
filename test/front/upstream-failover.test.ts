// Several upstreams over undici's MockAgent: calls spread over those in rotation,
// a call that got no answer tried once on another, a failing upstream taken out of rotation and
// back after a probe or its first answer; a lone upstream still called while it is out (panic
// routing). Socket behaviour
// (refusals, draining post APIs, pending calls) is tested on loopback in upstream-rotation.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PooledUpstreamClient } from '../../src/front/upstream/client.js'
import { call, clientOver, coded, mockAgent, rejectsWith } from '../helpers/mock-upstream.js'
import { pollUntil } from '../helpers/poll.js'

const A = 'http://a.test'
const B = 'http://b.test'
const C = 'http://c.test'

/** Which upstream answered, from the body each one sends. */
async function answerer (client: PooledUpstreamClient): Promise<string> {
  return (await client.get('/api/posts', call)).body.toString()
}

async function inRotation (client: PooledUpstreamClient, count: number): Promise<void> {
  await pollUntil(`${count} upstreams in rotation`, () => client.inRotation() === count, { everyMs: 5 })
}

test('calls go round-robin over the upstreams in rotation', async (t) => {
  const agent = mockAgent()
  for (const origin of [A, B, C]) agent.get(origin).intercept({ path: '/api/posts' }).reply(200, origin).persist()
  const { client } = clientOver(t, agent, { bases: [A, B, C] })
  const order = []
  for (let i = 0; i < 6; i++) order.push(await answerer(client))
  assert.deepEqual(order, [A, B, C, A, B, C])
})

test('a refused call is tried once on another upstream, at once; never again on the refusing one', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED'))
  agent.get(B).intercept({ path: '/api/posts', headers: { 'x-request-id': 'req-1' } }).reply(200, B)
  const { client, freshUsed } = clientOver(t, agent, { bases: [A, B] })
  assert.equal(await answerer(client), B)
  assert.equal(freshUsed(), 0)
  agent.assertNoPendingInterceptors()
})

test('a reset before any answer is tried on another upstream in rotation rather than on a fresh connection', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('UND_ERR_SOCKET'))
  agent.get(B).intercept({ path: '/api/posts' }).reply(200, B)
  const { client, freshUsed } = clientOver(t, agent, { bases: [A, B] })
  assert.equal(await answerer(client), B)
  assert.equal(freshUsed(), 0)
})

test('a 503 with Connection: close (an upstream shutting down) is tried on another; a plain 503 is handed back', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).reply(503, '{"type":"urn:blog-read-api:problem:shutting-down"}', { headers: { connection: 'close', 'retry-after': '5' } })
  agent.get(B).intercept({ path: '/api/posts' }).reply(200, B)
  const { client } = clientOver(t, agent, { bases: [A, B] })
  assert.equal(await answerer(client), B)
  agent.get(A).intercept({ path: '/api/posts' }).reply(503, '{"type":"urn:blog-read-api:problem:store-unavailable"}', { headers: { 'retry-after': '2' } })
  agent.get(B).intercept({ path: '/api/posts' }).reply(200, B)
  const relayed = await client.get('/api/posts', call)
  assert.equal(relayed.status, 503)
  assert.equal(relayed.headers['retry-after'], '2')
  assert.equal(agent.pendingInterceptors().length, 1, 'a plain 503 was retried')
})

test('a 503 overloaded (shed at once) is tried on another in rotation, never on the same one; alone, it is handed back', async (t) => {
  const shed = '{"type":"urn:blog-read-api:problem:overloaded","title":"Service overloaded","status":503}'
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).reply(503, shed, { headers: { 'retry-after': '1' } })
  agent.get(B).intercept({ path: '/api/posts' }).reply(200, B)
  const { client, freshUsed } = clientOver(t, agent, { bases: [A, B] })
  assert.equal(await answerer(client), B)
  assert.equal(client.inRotation(), 2, 'a process that shed a request is still there')
  const lone = mockAgent()
  lone.get(A).intercept({ path: '/api/posts' }).reply(503, shed, { headers: { 'retry-after': '1' } })
  lone.get(A).intercept({ path: '/api/posts' }).reply(200, A)
  const alone = clientOver(t, lone, { bases: [A] })
  const relayed = await alone.client.get('/api/posts', call)
  assert.equal(relayed.status, 503)
  assert.equal(relayed.headers['retry-after'], '1')
  assert.equal(lone.pendingInterceptors().length, 1, 'not tried again on the upstream that shed it')
  assert.equal(freshUsed() + alone.freshUsed(), 0)
})

test('a time-out is never tried again, anywhere', async (t) => {
  for (const code of ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']) {
    const agent = mockAgent()
    agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded(code))
    agent.get(B).intercept({ path: '/api/posts' }).reply(200, B)
    const { client, freshUsed } = clientOver(t, agent, { bases: [A, B] })
    await rejectsWith(client.get('/api/posts', call), 'upstream-timeout')
    assert.equal(agent.pendingInterceptors().length, 1, `${code} was retried`)
    assert.equal(freshUsed(), 0)
  }
})

test('one retry only: when the second upstream fails too, its failure is the answer', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED'))
  agent.get(B).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNRESET'))
  agent.get(C).intercept({ path: '/api/posts' }).reply(200, C)
  const { client, freshUsed } = clientOver(t, agent, { bases: [A, B, C] })
  await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  assert.equal(agent.pendingInterceptors().length, 1, 'a third upstream was tried')
  assert.equal(freshUsed(), 0)
})

test('an upstream that fails ejectFailures calls in a row leaves rotation, is probed, and comes back on the first probe it answers', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED')).times(2)
  agent.get(B).intercept({ path: '/api/posts' }).reply(200, B).persist()
  // Its probes: refused twice, then any answer (a post API without readiness answers 404).
  agent.get(A).intercept({ path: '/readyz' }).replyWithError(coded('ECONNREFUSED')).times(2)
  const { client } = clientOver(t, agent, { bases: [A, B], ejectFailures: 2 })
  // Each refused call was answered by B; the second refusal took A out.
  assert.deepEqual([await answerer(client), await answerer(client)], [B, B])
  assert.equal(client.inRotation(), 1)
  for (let i = 0; i < 4; i++) assert.equal(await answerer(client), B)
  agent.get(A).intercept({ path: '/api/posts' }).reply(200, A).persist()
  agent.get(A).intercept({ path: '/readyz' }).reply(404, '{}')
  await inRotation(client, 2)
  const order = []
  for (let i = 0; i < 4; i++) order.push(await answerer(client))
  assert.deepEqual(order.sort(), [A, A, B, B], 'A takes its share again')
})

test('a success in between resets the count: only failures in a row take an upstream out', async (t) => {
  const agent = mockAgent()
  for (let i = 0; i < 3; i++) {
    agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED'))
    agent.get(A).intercept({ path: '/api/posts' }).reply(200, A)
  }
  const { client } = clientOver(t, agent, { ejectFailures: 2, bases: [A] })
  for (let i = 0; i < 3; i++) {
    await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
    assert.equal(await answerer(client), A)
  }
  assert.equal(client.inRotation(), 1)
})

test('a lone upstream out of rotation is still called: failures as mapped (502, 504), said so, with Retry-After; its first answer is served and brings it back', async (t) => {
  for (const [code, kind] of [['ECONNREFUSED', 'upstream-unreachable'], ['UND_ERR_HEADERS_TIMEOUT', 'upstream-timeout']] as const) {
    const agent = mockAgent()
    agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded(code)).times(4)
    // Probes far apart: none comes before the end of the test.
    const { client } = clientOver(t, agent, { bases: [A], ejectFailures: 2, probeIntervalMs: 10_000 })
    for (let i = 0; i < 2; i++) await rejectsWith(client.get('/api/posts', call), kind)
    assert.equal(client.inRotation(), 0)
    for (let i = 0; i < 2; i++) {
      const failed = await rejectsWith(client.get('/api/posts', call), kind)
      assert.match(failed.message, /No upstream is in rotation/)
      assert.equal(failed.retryAfter, 10, 'Retry-After: the probe interval, in whole seconds')
    }
    agent.get(A).intercept({ path: '/api/posts' }).reply(200, A)
    assert.equal(await answerer(client), A)
    assert.equal(client.inRotation(), 1, 'its answer brought it back, with no probe')
    agent.assertNoPendingInterceptors()
  }
})

test('a lone upstream back: served again once a probe is answered', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED'))
  agent.get(A).intercept({ path: '/readyz' }).replyWithError(coded('ECONNREFUSED')).times(3)
  const { client } = clientOver(t, agent, { bases: [A], ejectFailures: 1 })
  await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  agent.get(A).intercept({ path: '/readyz' }).reply(200, '{}')
  agent.get(A).intercept({ path: '/api/posts' }).reply(200, A)
  await inRotation(client, 1)
  assert.equal(await answerer(client), A)
  agent.assertNoPendingInterceptors()
})

test('a probe answered 503 (not ready, or shutting down) keeps an upstream out; its calls are still made, and their 503 handed back as sent', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED'))
  let probes = 0
  agent.get(A).intercept({ path: '/readyz' }).reply(() => {
    probes++
    return { statusCode: 503, data: '{}' }
  }).persist()
  const { client } = clientOver(t, agent, { bases: [A], ejectFailures: 1 })
  await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  await pollUntil('two probes answered 503', () => probes >= 2, { everyMs: 5 })
  agent.get(A).intercept({ path: '/api/posts' }).reply(503, '{}', { headers: { 'retry-after': '7' } })
  const answer = await client.get('/api/posts', call)
  assert.equal(answer.status, 503)
  assert.equal(answer.headers['retry-after'], '7')
  assert.equal(client.inRotation(), 0, 'a 503 does not bring it back')
})

test('a wrong answer shows the upstream is there: it never takes it out of rotation', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).reply(200, 'x'.repeat(2000)).times(3)
  const { client } = clientOver(t, agent, { bases: [A], ejectFailures: 1 })
  for (let i = 0; i < 3; i++) {
    const err = await rejectsWith(client.get('/api/posts', call), 'upstream-bad-response')
    assert.doesNotMatch(err.message, /rotation/)
  }
  assert.equal(client.inRotation(), 1)
})

test('ejectFailures 0: an upstream is never taken out', async (t) => {
  const agent = mockAgent()
  agent.get(A).intercept({ path: '/api/posts' }).replyWithError(coded('ECONNREFUSED')).times(10)
  const { client } = clientOver(t, agent, { bases: [A], ejectFailures: 0 })
  for (let i = 0; i < 10; i++) await rejectsWith(client.get('/api/posts', call), 'upstream-unreachable')
  assert.equal(client.inRotation(), 1)
  agent.assertNoPendingInterceptors()
})
