// The CORS headers of an answer, by the request's Origin. The fast lane lists the headers of each
// headers object once and keeps that listing by the object, so each origin must get one object.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { createCors } from '../../src/http/cors.js'

const LISTED = ['https://a.example', 'https://b.example']

test('a listed origin is allowed, each by one headers object; any other, or none, gets the refusal', () => {
  const cors = createCors(LISTED)
  assert.ok(cors !== undefined)
  const refused = cors.headersFor(undefined)
  assert.equal(refused['access-control-allow-origin'], undefined)
  assert.equal(refused.vary, 'Origin')
  fc.assert(fc.property(fc.oneof(fc.constantFrom(...LISTED), fc.webUrl(), fc.string()), (origin) => {
    const headers = cors.headersFor(origin)
    assert.equal(headers, cors.headersFor(origin), 'the same object for the same origin')
    if (LISTED.includes(origin)) {
      assert.equal(headers['access-control-allow-origin'], origin)
      assert.equal(headers.vary, 'Origin')
      assert.match(headers['access-control-expose-headers'] ?? '', /X-Request-Id/)
    } else {
      assert.equal(headers, refused)
    }
  }))
  assert.notEqual(cors.headersFor(LISTED[0]), cors.headersFor(LISTED[1]))
})

test('any origin: one headers object for every request; no origins: no CORS', () => {
  const cors = createCors('*')
  assert.ok(cors !== undefined)
  assert.equal(cors.headersFor('https://a.example'), cors.headersFor(undefined))
  assert.equal(cors.headersFor(undefined)['access-control-allow-origin'], '*')
  assert.equal(createCors([]), undefined)
})
