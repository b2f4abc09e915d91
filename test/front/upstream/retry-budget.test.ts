// The retry budget with an injected clock: no waiting.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createRetryBudget } from '../../../src/front/upstream/retry-budget.js'

function budgetAt (): { budget: ReturnType<typeof createRetryBudget>, clock: { now: number } } {
  const clock = { now: 1_000_000 }
  return { budget: createRetryBudget({ ratio: 0.2, minPerSecond: 1, windowMs: 10_000 }, () => clock.now), clock }
}

function retriesAllowed (budget: ReturnType<typeof createRetryBudget>): number {
  let allowed = 0
  while (budget.tryRetry()) allowed++
  return allowed
}

test('without calls, minPerSecond × the window: a burst is allowed at once', () => {
  const { budget } = budgetAt()
  assert.equal(retriesAllowed(budget), 10)
})

test('each call adds `ratio` of a retry', () => {
  const { budget } = budgetAt()
  for (let i = 0; i < 100; i++) budget.called()
  assert.equal(retriesAllowed(budget), 30)
})

test('calls and retries leave the window after windowMs, a slot at a time', () => {
  const { budget, clock } = budgetAt()
  for (let i = 0; i < 50; i++) budget.called()
  assert.equal(retriesAllowed(budget), 20)
  clock.now += 5000
  assert.equal(retriesAllowed(budget), 0, 'still spent within the window')
  clock.now += 5000
  assert.equal(retriesAllowed(budget), 10, 'the calls and retries of 10 s ago are forgotten')
  clock.now += 60_000
  for (let i = 0; i < 5; i++) budget.called()
  assert.equal(retriesAllowed(budget), 11)
})

test('a clock going backwards counts in the latest slot', () => {
  const { budget, clock } = budgetAt()
  clock.now -= 60_000
  budget.called()
  assert.equal(retriesAllowed(budget), 11, 'the call counted')
})
