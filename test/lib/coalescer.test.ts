// The coalescer on its own: identical concurrent calls share one run, but never a run that
// started before the request arrived; a failure is passed to those who shared it, never kept.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AbandonedCallError, createCoalescer } from '../../src/lib/coalescer.js'

/** A call that resolves or rejects when the test says, recording that it started. */
function deferredCalls (): { call: () => Promise<number>, started: () => number, settle: (index: number, value: number | Error) => void } {
  const settlers: Array<(value: number | Error) => void> = []
  return {
    call: () => new Promise<number>((resolve, reject) => {
      settlers.push((value) => value instanceof Error ? reject(value) : resolve(value))
    }),
    started: () => settlers.length,
    settle: (index, value) => settlers[index]?.(value)
  }
}

const tick = (): Promise<void> => new Promise(setImmediate)

test('requests arriving while no call runs share one call', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const a = coalescer.run('k', calls.call)
  assert.equal(calls.started(), 1)
  calls.settle(0, 1)
  assert.equal(await a, 1)
})

test('a request arriving while a call runs waits for the next call, shared by every latecomer', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const first = coalescer.run('k', calls.call)
  const late1 = coalescer.run('k', calls.call)
  const late2 = coalescer.run('k', calls.call)
  assert.equal(calls.started(), 1, 'the latecomers do not start a call at once')
  calls.settle(0, 1)
  assert.equal(await first, 1)
  await tick()
  assert.equal(calls.started(), 2, 'one next call for both latecomers')
  calls.settle(1, 2)
  assert.deepEqual(await Promise.all([late1, late2]), [2, 2], 'latecomers never get the call that started before them')
})

test('different keys never share', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const a = coalescer.run('a', calls.call)
  const b = coalescer.run('b', calls.call)
  assert.equal(calls.started(), 2)
  calls.settle(0, 1)
  calls.settle(1, 2)
  assert.deepEqual(await Promise.all([a, b]), [1, 2])
})

test('a failure reaches those who shared the call and is not kept: the next request calls again', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const first = coalescer.run('k', calls.call)
  const late = coalescer.run('k', calls.call)
  calls.settle(0, new Error('down'))
  await assert.rejects(first, /down/)
  await tick()
  calls.settle(1, new Error('still down'))
  await assert.rejects(late, /still down/)
  await tick()
  const after = coalescer.run('k', calls.call)
  assert.equal(calls.started(), 3, 'a new call after the failures')
  calls.settle(2, 3)
  assert.equal(await after, 3)
})

test('a finished call is forgotten: a request after it starts its own', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const first = coalescer.run('k', calls.call)
  calls.settle(0, 1)
  await first
  await tick()
  const second = coalescer.run('k', calls.call)
  assert.equal(calls.started(), 2)
  calls.settle(1, 2)
  assert.equal(await second, 2)
})

test('a next call nobody waits for any more is not made; one that someone still waits for is, for all', async () => {
  const coalescer = createCoalescer<number>()
  const calls = deferredCalls()
  const first = coalescer.run('k', calls.call)
  const gone = coalescer.run('k', calls.call, () => false)
  const alsoGone = coalescer.run('k', calls.call, () => false)
  calls.settle(0, 1)
  assert.equal(await first, 1)
  await assert.rejects(gone, AbandonedCallError)
  await assert.rejects(alsoGone, AbandonedCallError)
  assert.equal(calls.started(), 1, 'no call for those who left')
  // Forgotten: the next request starts a call of its own at once.
  const fresh = coalescer.run('k', calls.call, () => false)
  assert.equal(calls.started(), 2, 'a request that starts a call is there by definition')
  const stays = coalescer.run('k', calls.call, () => true)
  const leaves = coalescer.run('k', calls.call, () => false)
  calls.settle(1, 2)
  assert.equal(await fresh, 2)
  await tick()
  assert.equal(calls.started(), 3, 'one of them still waits: the next call is made, for both')
  calls.settle(2, 3)
  assert.deepEqual(await Promise.all([stays, leaves]), [3, 3])
})
