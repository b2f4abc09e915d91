import assert from 'node:assert/strict'
import { PROBLEM_TYPE_BASE, PROBLEMS, type ProblemKind } from '../../src/contract/problems.js'
import type { TestResponse } from './http.js'

/** The answer is the RFC 9457 document of `kind`, with nothing internal in it. */
export function assertProblem (response: TestResponse, kind: ProblemKind): Record<string, unknown> {
  const { status, title } = PROBLEMS[kind]
  assert.equal(response.status, status, `expected ${status} ${kind}, got ${response.status}: ${response.text}`)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
  const body = response.json() as Record<string, unknown>
  assert.deepEqual(Object.keys(body).sort(), ['detail', 'status', 'title', 'type'])
  assert.equal(body.type, PROBLEM_TYPE_BASE + kind)
  assert.equal(body.title, title)
  assert.equal(body.status, status)
  assert.equal(typeof body.detail, 'string')
  assert.doesNotMatch(response.text, /127\.0\.0\.1|localhost|\bat .+:\d+:\d+|stack|SELECT/i, 'no internal detail in a problem')
  return body
}
