// The circuit breaker with an injected clock: no real waiting.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createCircuitBreaker } from '../../src/front/circuit-breaker.js'
import { ProblemError } from '../../src/problems.js'

const refused = new ProblemError('upstream-unreachable', 'The upstream post API could not be reached.')

function breakerAt (failures: number): { breaker: ReturnType<typeof createCircuitBreaker>, clock: { now: number } } {
  const clock = { now: 1_000_000 }
  return { breaker: createCircuitBreaker({ failures, openMs: 1000, maxOpenMs: 4000 }, () => clock.now), clock }
}

function failFast (breaker: ReturnType<typeof createCircuitBreaker>): ProblemError {
  try {
    breaker.check()
  } catch (err) {
    assert.ok(err instanceof ProblemError)
    return err
  }
  return assert.fail('the breaker let the call through')
}

test('closed until `failures` consecutive failures; a success in between resets the count', () => {
  const { breaker } = breakerAt(3)
  breaker.failed(refused)
  breaker.failed(refused)
  breaker.succeeded()
  breaker.failed(refused)
  breaker.failed(refused)
  breaker.check()
  breaker.failed(refused)
  failFast(breaker)
})

test('open: the last failure\'s problem with a Retry-After of the time left, until the period ends', () => {
  const { breaker, clock } = breakerAt(2)
  breaker.failed(refused)
  breaker.failed(refused)
  const problem = failFast(breaker)
  assert.equal(problem.kind, 'upstream-unreachable')
  assert.match(problem.message, /failing fast/)
  assert.equal(problem.retryAfter, 1)
  clock.now += 999
  failFast(breaker)
  clock.now += 1
  breaker.check() // the trial
})

test('one trial at a time: others fail fast while it runs; its success closes the breaker', () => {
  const { breaker, clock } = breakerAt(1)
  breaker.failed(refused)
  clock.now += 1000
  breaker.check()
  failFast(breaker)
  breaker.succeeded()
  breaker.check()
  breaker.check()
})

test('a failed trial reopens for twice as long, capped at maxOpenMs; a success restores the first period', () => {
  const { breaker, clock } = breakerAt(1)
  breaker.failed(refused)
  for (const period of [2000, 4000, 4000]) {
    clock.now += 10_000
    breaker.check()
    breaker.failed(refused)
    assert.equal(failFast(breaker).retryAfter, period / 1000)
    clock.now += period - 1
    failFast(breaker)
  }
  clock.now += 1
  breaker.check()
  breaker.succeeded()
  breaker.failed(refused)
  assert.equal(failFast(breaker).retryAfter, 1, 'back to the first period')
})

test('failures: 0 never opens', () => {
  const { breaker } = breakerAt(0)
  for (let i = 0; i < 100; i++) breaker.failed(refused)
  breaker.check()
})
