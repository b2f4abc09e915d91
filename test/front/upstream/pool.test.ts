// The rotation, ejection and probing of upstreams, with fake probes and mocked timers: no
// sockets, no waiting.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { createUpstreamPool, type UpstreamPool, type UpstreamPoolOptions } from '../../../src/front/upstream/pool.js'
import { ProblemError } from '../../../src/contract/problems.js'

const refused = new ProblemError('upstream-unreachable', 'refused')
const timedOut = new ProblemError('upstream-timeout', 'too slow')

interface Harness {
  pool: UpstreamPool<string>
  /** Probes started, with the means to answer each. */
  probes: Array<{ upstream: string, stop: AbortSignal, answer: (failure?: ProblemError) => Promise<void> }>
  changes: string[]
}

/** A pool of `upstreams` whose probes wait for the test to answer them, timers mocked. */
function harness (t: TestContext, upstreams: string[], options: Partial<UpstreamPoolOptions<string>> = {}): Harness {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const probes: Harness['probes'] = []
  const changes: string[] = []
  const pool = createUpstreamPool({
    upstreams,
    ejectFailures: 2,
    probeIntervalMs: 300,
    probe: async (upstream, stop) => await new Promise((resolve) => {
      probes.push({
        upstream,
        stop,
        answer: async (failure) => {
          resolve(failure)
          // Let the pool act on the answer.
          await new Promise(setImmediate)
        }
      })
    }),
    onChange: (upstream, inRotation, failure) => changes.push(`${upstream} ${inRotation ? 'in' : `out: ${failure?.message ?? ''}`}`),
    ...options
  })
  t.after(() => pool.close())
  return { pool, probes, changes }
}

/** Picks `n` times in a row, each call finishing before the next. */
function picks (pool: UpstreamPool<string>, n: number): string[] {
  return Array.from({ length: n }, () => pool.pick()?.upstream ?? 'none')
}

test('round-robin among upstreams with as many calls pending', (t) => {
  const { pool } = harness(t, ['a', 'b', 'c'])
  assert.deepEqual(picks(pool, 7), ['a', 'b', 'c', 'a', 'b', 'c', 'a'])
})

test('the upstream with the fewest calls pending first; `except` is never picked', (t) => {
  const { pool } = harness(t, ['a', 'b', 'c'])
  const a = pool.pick()
  assert.equal(a?.upstream, 'a')
  if (a === undefined) return
  a.pending = 2
  const b = pool.pick()
  assert.equal(b?.upstream, 'b')
  if (b === undefined) return
  b.pending = 1
  assert.deepEqual(picks(pool, 3), ['c', 'c', 'c'])
  assert.equal(pool.pick(pool.pick())?.upstream, 'b', 'c excepted, b has fewer pending than a')
})

test('ejectFailures failures in a row take an upstream out; a success in between resets the count', (t) => {
  const { pool, changes } = harness(t, ['a', 'b'])
  const a = pool.pick()
  if (a === undefined) return assert.fail()
  pool.record(a, refused)
  pool.record(a)
  pool.record(a, refused)
  assert.equal(pool.inRotation(), 2)
  pool.record(a, timedOut)
  assert.equal(pool.inRotation(), 1)
  assert.deepEqual(changes, ['a out: too slow'])
  assert.deepEqual(picks(pool, 3), ['b', 'b', 'b'])
  pool.record(a, refused)
  assert.deepEqual(changes, ['a out: too slow'], 'failures of calls already under way change nothing more')
})

test('an upstream out is probed every probeIntervalMs until it answers, then back in rotation', async (t) => {
  const { pool, probes, changes } = harness(t, ['a', 'b'])
  const a = pool.pick()
  if (a === undefined) return assert.fail()
  pool.record(a, refused)
  pool.record(a, refused)
  t.mock.timers.tick(299)
  assert.equal(probes.length, 0, 'probed before the interval')
  t.mock.timers.tick(1)
  assert.deepEqual(probes.map((p) => p.upstream), ['a'])
  t.mock.timers.tick(1000)
  assert.equal(probes.length, 1, 'one probe at a time')
  await probes[0]?.answer(refused)
  t.mock.timers.tick(300)
  assert.equal(probes.length, 2, 'probed again an interval after the failed probe')
  await probes[1]?.answer()
  assert.equal(pool.inRotation(), 2)
  assert.deepEqual(changes, ['a out: refused', 'a in'])
  assert.deepEqual(picks(pool, 4).sort(), ['a', 'a', 'b', 'b'])
  t.mock.timers.tick(10_000)
  assert.equal(probes.length, 2, 'no probe once back')
  // Out again later: counted afresh from the return.
  pool.record(a, refused)
  assert.equal(pool.inRotation(), 2)
})

test('the last upstream leaves too: then every upstream is picked as if in rotation (panic routing), and a failure says so, with Retry-After', async (t) => {
  const { pool, probes } = harness(t, ['a', 'b'], { probeIntervalMs: 2500 })
  const [a, b] = [pool.pick(), pool.pick()]
  if (a === undefined || b === undefined) return assert.fail()
  for (const member of [a, b, a, b]) pool.record(member, timedOut)
  assert.equal(pool.inRotation(), 0)
  assert.deepEqual(picks(pool, 4), ['a', 'b', 'a', 'b'])
  assert.equal(pool.pick(a)?.upstream, 'b', '`except` still holds')
  const problem = pool.duringOutage(timedOut)
  assert.equal(problem.kind, 'upstream-timeout')
  assert.match(problem.message, /^too slow No upstream is in rotation/)
  assert.equal(problem.retryAfter, 3)
  // One comes back by its probe: calls go to it alone again.
  t.mock.timers.tick(2500)
  await probes[0]?.answer()
  assert.deepEqual(picks(pool, 3), ['a', 'a', 'a'])
})

test('a call answered by an upstream out of rotation brings it back at once; a 503 answer neither brings it back nor counts against it', async (t) => {
  const { pool, probes, changes } = harness(t, ['a'], { probeIntervalMs: 60_000 })
  const a = pool.pick()
  if (a === undefined) return assert.fail()
  pool.record(a, refused)
  pool.record(a, refused)
  assert.equal(pool.inRotation(), 0)
  assert.equal(pool.pick(), a, 'tried though out of rotation')
  pool.record(a, undefined, false)
  assert.equal(pool.inRotation(), 0, 'a 503 does not bring it back')
  pool.record(a)
  assert.equal(pool.inRotation(), 1, 'an answer does, with no probe')
  assert.equal(probes.length, 0)
  assert.deepEqual(changes, ['a out: refused', 'a in'])
  t.mock.timers.tick(60_000)
  assert.equal(probes.length, 0, 'its probe was cancelled')
  // In rotation, 503 answers never take it out.
  for (let i = 0; i < 10; i++) pool.record(a, undefined, false)
  assert.equal(pool.inRotation(), 1)
  // Back by a call while its probe runs: the probe's answer changes nothing more.
  pool.record(a, refused)
  pool.record(a, refused)
  t.mock.timers.tick(60_000)
  assert.equal(probes.length, 1)
  pool.record(a)
  await probes[0]?.answer()
  assert.deepEqual(changes, ['a out: refused', 'a in', 'a out: refused', 'a in'])
})

test('ejectFailures 0: never out', (t) => {
  const { pool } = harness(t, ['a'], { ejectFailures: 0 })
  const a = pool.pick()
  if (a === undefined) return assert.fail()
  for (let i = 0; i < 100; i++) pool.record(a, refused)
  assert.equal(pool.pick(), a)
})

test('close stops probing: the probe under way is told to stop and its answer ignored; none follows', async (t) => {
  const { pool, probes } = harness(t, ['a', 'b'], { ejectFailures: 1 })
  const a = pool.pick()
  if (a === undefined) return assert.fail()
  pool.record(a, refused)
  pool.pick()
  const b = pool.pick(a)
  if (b === undefined) return assert.fail()
  pool.record(b, refused)
  t.mock.timers.tick(300)
  assert.equal(probes.length, 2)
  pool.close()
  assert.ok(probes.every((p) => p.stop.aborted))
  await probes[0]?.answer()
  assert.equal(pool.inRotation(), 0)
  t.mock.timers.tick(10_000)
  assert.equal(probes.length, 2)
})

test('a pool needs an upstream', () => {
  assert.throws(() => createUpstreamPool({ upstreams: [], ejectFailures: 1, probeIntervalMs: 1, probe: async () => undefined }))
})
