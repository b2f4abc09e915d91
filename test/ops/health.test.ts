// Readiness checks (src/ops/health.ts): a store check runs at most once a second however many
// probes come, is bounded in time, and logs when readiness changes; the front's follows the
// upstreams in rotation.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createSharedCheck, createUpstreamReadiness, READY, type Readiness } from '../../src/ops/health.js'
import { createStoreReadiness } from '../../src/ops/store-readiness.js'
import { StoreUnavailableError } from '../../src/store/store.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { logSink } from '../helpers/log-sink.js'

const NOT_READY: Readiness = { ready: false, reason: 'down' }

test('a shared check: concurrent probes share one run, later ones reuse its result until it is old', async () => {
  let clock = 0
  let runs = 0
  let answer: Readiness = READY
  const check = createSharedCheck(async () => {
    runs++
    return answer
  }, { reuseMs: 1000, timeoutMs: 500, now: () => clock })
  assert.deepEqual(await Promise.all(Array.from({ length: 50 }, async () => await check())), Array(50).fill(READY))
  assert.equal(runs, 1)
  answer = NOT_READY
  clock = 999
  assert.deepEqual(await check(), READY, 'reused within the second')
  assert.equal(runs, 1)
  clock = 1000
  assert.deepEqual(await check(), NOT_READY)
  assert.equal(runs, 2)
})

test('a shared check that does not settle in time, or throws, is not ready', async () => {
  let settle: (readiness: Readiness) => void = () => {}
  const slow = createSharedCheck(async () => await new Promise<Readiness>((resolve) => { settle = resolve }), { reuseMs: 0, timeoutMs: 20 })
  const late = await slow()
  assert.equal(late.ready, false)
  assert.match(late.ready ? '' : late.reason, /did not finish within 20 ms/)
  settle(READY)
  const failing = createSharedCheck(async () => { throw new Error('boom') }, { reuseMs: 0, timeoutMs: 20 })
  assert.equal((await failing()).ready, false)
  assert.equal((await failing()).ready, false, 'and the next probe runs it again')
})

test('the store check: one query for a flood of probes; not ready on an outage, logged once each way', async () => {
  let probes = 0
  let failure: Error | undefined
  const store = { ...createCountingStore([]), probe: async () => { probes++; if (failure !== undefined) throw failure } }
  const { logger, lines } = logSink('info')
  let clock = 0
  const ready = createStoreReadiness(store, logger, () => clock)
  await Promise.all(Array.from({ length: 100 }, async () => assert.deepEqual(await ready(), READY)))
  assert.equal(probes, 1)

  failure = new StoreUnavailableError('the sqlite store failed to answer', { cause: new Error('no such table: posts') })
  clock = 999
  assert.deepEqual(await ready(), READY, 'the last result, reused within the second')
  assert.equal(probes, 1)
  clock = 1000
  const readiness = await ready()
  assert.deepEqual(readiness.ready ? undefined : readiness.reason, 'The post store is not answering.')
  failure = new TypeError('a defect')
  clock = 2000
  const defect = await ready()
  assert.deepEqual(defect.ready ? undefined : defect.reason, 'The post store failed to answer.')
  failure = undefined
  clock = 3000
  assert.deepEqual(await ready(), READY)
  assert.equal(probes, 4)
  assert.deepEqual(lines.map((line) => [line.level, line.msg, line.err?.message]), [
    [40, 'not ready: The post store is not answering.', 'the sqlite store failed to answer: no such table: posts'],
    [30, 'ready: the post store answers again', undefined]
  ])
})

test('the front is ready while an upstream is in rotation', () => {
  let inRotation = 2
  const ready = createUpstreamReadiness({ inRotation: () => inRotation })
  assert.deepEqual(ready(), READY)
  inRotation = 0
  assert.deepEqual(ready(), { ready: false, reason: 'No upstream post API is in rotation.' })
})
