import assert from 'node:assert/strict'
import { test } from 'node:test'
import { capMaxAge, scheduledInstantIn, scheduledInstantOf, withScheduledInstant } from '../../src/contract/posts-schedule.js'
import { VERSION_PATTERN } from '../../src/contract/posts-version.js'

test('a version names the next scheduled instant, and stays a version', () => {
  const version = withScheduledInstant('abc.42', 1748779200000)
  assert.match(version, VERSION_PATTERN)
  assert.equal(scheduledInstantOf(version), 1748779200000)
  assert.equal(withScheduledInstant('abc.42', undefined), 'abc.42')
  assert.equal(scheduledInstantOf('abc.42'), undefined)
  assert.equal(scheduledInstantOf(undefined), undefined)
  assert.equal(scheduledInstantOf('abc~x'), undefined)
  assert.equal(scheduledInstantIn('1748779200000'), 1748779200000)
  assert.equal(scheduledInstantIn('-1'), undefined)
  assert.equal(scheduledInstantIn(['1', '2']), undefined)
})

test('max-age and s-maxage are capped at the whole seconds left, rounded down; other directives untouched', () => {
  const now = 1_000_000
  assert.equal(capMaxAge('public, max-age=86400, s-maxage=600', now + 3_600_500, now), 'public, max-age=3600, s-maxage=600')
  assert.equal(capMaxAge('public, max-age=86400', now + 999, now), 'public, max-age=0')
  assert.equal(capMaxAge('public, max-age=86400', now - 5, now), 'public, max-age=0')
  assert.equal(capMaxAge('public, max-age=60', now + 3_600_000, now), 'public, max-age=60')
  assert.equal(capMaxAge('no-cache', now + 1, now), 'no-cache')
  assert.equal(capMaxAge('public, max-age=86400', undefined, now), 'public, max-age=86400')
})
