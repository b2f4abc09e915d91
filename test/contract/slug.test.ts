import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createSlugValidator, isLookupableSlug, SLUG_MAX_LENGTH } from '../../src/contract/slug.js'

test('the default slug rule', () => {
  const valid = createSlugValidator()
  for (const slug of ['a', 'hello-world', 'post-2024-01', '0', 'a'.repeat(SLUG_MAX_LENGTH)]) assert.equal(valid(slug), true, slug)
  for (const slug of ['', '-', 'a-', '-a', 'a--b', 'A', 'a_b', 'a b', 'a/b', '..', '.', 'é', 'a'.repeat(SLUG_MAX_LENGTH + 1), 'a\nb']) assert.equal(valid(slug), false, slug)
})

test('an operator pattern is anchored, bounded, and never admits dot segments', () => {
  const valid = createSlugValidator(/[A-Za-z0-9.]+/)
  assert.equal(valid('Hello.World'), true)
  assert.equal(valid('..'), false)
  assert.equal(valid('.'), false)
  assert.equal(valid('ok/../x'), false)
  assert.equal(valid('A'.repeat(SLUG_MAX_LENGTH + 1)), false)
})

test('the upstream looks up any storable slug of at most SLUG_MAX_LENGTH characters', () => {
  assert.equal(isLookupableSlug('Hello World'), true)
  assert.equal(isLookupableSlug("' OR 1=1 --"), true)
  assert.equal(isLookupableSlug('a\u0000b'), false)
  assert.equal(isLookupableSlug('\ud800'), false)
  assert.equal(isLookupableSlug(''), false)
  assert.equal(isLookupableSlug('a'.repeat(SLUG_MAX_LENGTH + 1)), false)
})
