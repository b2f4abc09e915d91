// The gate in isolation, on a hand-moved clock: turns in arrival order, a bounded queue, a
// bounded wait, and a refused task never run.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { createConcurrencyGate, GateRefusedError } from '../../src/lib/concurrency-gate.js'
import { createManualTimers } from '../helpers/manual-timers.js'

function deferred (): { promise: Promise<string>, resolve: (value: string) => void, reject: (err: Error) => void } {
  let resolve!: (value: string) => void
  let reject!: (err: Error) => void
  const promise = new Promise<string>((_resolve, _reject) => { resolve = _resolve; reject = _reject })
  return { promise, resolve, reject }
}

const refused = (reason: string) => (err: unknown): boolean => err instanceof GateRefusedError && err.reason === reason

test('at most `limit` at once; the next wait and start in arrival order as turns free up', async () => {
  const timers = createManualTimers()
  const gate = createConcurrencyGate({ limit: 2, maxQueue: 10, maxWaitMs: 1000, setTimeout: timers.setTimeout })
  const tasks = Array.from({ length: 5 }, deferred)
  const started: number[] = []
  const results = tasks.map(async (task, i) => await gate.run(async () => {
    started.push(i)
    return await task.promise
  }))
  const settled = Promise.allSettled(results)
  await yieldToLoop()
  assert.deepEqual(started, [0, 1])
  assert.deepEqual([gate.running, gate.waiting], [2, 3])
  tasks[1]?.resolve('one')
  await yieldToLoop()
  assert.deepEqual(started, [0, 1, 2])
  // A task that fails gives its turn back too.
  tasks[0]?.reject(new Error('store failed'))
  await yieldToLoop()
  assert.deepEqual(started, [0, 1, 2, 3])
  for (const task of tasks) task.resolve('done')
  assert.deepEqual((await settled).map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
  assert.deepEqual(started, [0, 1, 2, 3, 4])
  assert.deepEqual([gate.running, gate.waiting, timers.pending()], [0, 0, 0])
})

test('a full queue refuses at once, and the refused task never runs', async () => {
  const timers = createManualTimers()
  const gate = createConcurrencyGate({ limit: 1, maxQueue: 2, maxWaitMs: 1000, setTimeout: timers.setTimeout })
  const hold = deferred()
  const first = gate.run(async () => await hold.promise)
  const queued = [gate.run(async () => 'a'), gate.run(async () => 'b')]
  let ran = false
  await assert.rejects(gate.run(async () => { ran = true }), refused('queue-full'))
  assert.equal(ran, false)
  hold.resolve('first')
  assert.deepEqual(await Promise.all([first, ...queued]), ['first', 'a', 'b'])
})

test('a wait longer than maxWaitMs is refused, and leaves the queue', async () => {
  const timers = createManualTimers()
  const gate = createConcurrencyGate({ limit: 1, maxQueue: 5, maxWaitMs: 1000, setTimeout: timers.setTimeout })
  const hold = deferred()
  const first = gate.run(async () => await hold.promise)
  let ran = false
  const early = gate.run(async () => { ran = true })
  timers.advance(500)
  const late = gate.run(async () => 'late')
  timers.advance(500)
  await assert.rejects(early, refused('wait-expired'))
  assert.equal(ran, false)
  assert.equal(gate.waiting, 1)
  hold.resolve('first')
  assert.deepEqual(await Promise.all([first, late]), ['first', 'late'])
  assert.equal(timers.pending(), 0, 'the served waiter\'s timer is cancelled')
})

test('a turn entered is held until given back, and giving it back twice frees one turn', async () => {
  const timers = createManualTimers()
  const gate = createConcurrencyGate({ limit: 2, maxQueue: 0, maxWaitMs: 1000, setTimeout: timers.setTimeout })
  const first = await gate.enter()
  const second = await gate.enter()
  await assert.rejects(gate.enter(), refused('queue-full'))
  first()
  first()
  assert.equal(gate.running, 1, 'the second call gave back nothing')
  const third = await gate.enter()
  await assert.rejects(gate.run(async () => 'refused'), refused('queue-full'))
  second()
  third()
  assert.deepEqual([gate.running, gate.waiting], [0, 0])
})
