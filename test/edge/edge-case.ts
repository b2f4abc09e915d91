// The cases of the raw-socket edge tests (test/edge/*.test.ts): what a client sends, the answers
// it must get in order, and the work the tier may do for them; and the runner, which checks every
// answer's headers, one log line per answer with its request id, and the work done.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { PROBLEMS, type ProblemKind } from '../../src/contract/problems.js'
import { EDGE_POSTS, startEdgeFront, startEdgePostsApi, type EdgeTier } from '../helpers/edge-tiers.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { asTestResponse, rawSession, type RawResponse } from '../helpers/raw-http.js'

export const HOST = 'Host: t\r\n'
export const request = (method: string, target: string, extra = '', version = 'HTTP/1.1'): string => `${method} ${target} ${version}\r\n${HOST}${extra}\r\n`
/** A last request that asks the server to close, so that a session which stays open ends. */
export const closing = (tier: EdgeTier): string => request('GET', tier.list, 'Connection: close\r\n')
export const slug = (i: number): string => EDGE_POSTS[i % EDGE_POSTS.length]?.slug ?? 'post-0'

/** An answer expected: a status (a success), or the problem kind of an error. */
export type Expected = number | ProblemKind

export interface Case {
  name: string
  /** What the client sends: at once, or piece by piece (the answers must not depend on how the server reads it). */
  bytes: (tier: EdgeTier) => string | Buffer | string[]
  expect: (tier: EdgeTier) => Expected[]
  /** Work done for the requests (upstream calls or store reads). */
  calls: number | ((tier: EdgeTier) => number)
  /** `heads[i]`: the i-th answer is to a HEAD. */
  heads?: boolean[]
  check?: (responses: RawResponse[], tier: EdgeTier) => void
}

export const UNIQUE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The headers every answer carries, problems included, whoever wrote it. */
export function assertAnswerHeaders (response: RawResponse, tier: EdgeTier, what: string): void {
  assert.equal(response.headers['x-content-type-options'], 'nosniff', what)
  assert.equal(response.headers['x-frame-options'], 'DENY', what)
  assert.equal(response.headers['referrer-policy'], 'no-referrer', what)
  assert.match(response.headers['content-security-policy'] ?? '', /default-src 'none'/, what)
  assert.ok((response.headers['x-request-id'] ?? '') !== '', `${what}: an X-Request-Id`)
  if (tier.cors) {
    assert.equal(response.headers['access-control-allow-origin'], '*', `${what}: CORS`)
    assert.match(response.headers['access-control-expose-headers'] ?? '', /X-Request-Id/, `${what}: CORS`)
  } else {
    assert.equal(response.headers['access-control-allow-origin'], undefined, what)
  }
  if (response.status >= 400) {
    assert.equal(response.headers['content-type'], 'application/problem+json', `${what}: one content type for problems`)
    assert.equal(response.headers['cache-control'], 'no-store', what)
  }
  if (response.status === 405 || response.status === 413) assert.equal(response.headers.allow, 'GET, HEAD', `${what}: Allow`)
}

/** Runs one case: the answers, in order; the work done; one log line per answer, with its id. */
async function run (tier: EdgeTier, c: Case): Promise<RawResponse[]> {
  const callsBefore = tier.calls()
  const linesBefore = tier.requestLines().length
  const { responses } = await rawSession(tier.port, c.bytes(tier), { heads: c.heads ?? [] })
  const expected = c.expect(tier)
  assert.deepEqual(responses.map((r) => r.status), expected.map((e) => typeof e === 'number' ? e : PROBLEMS[e].status), `${tier.name}, ${c.name}: the answers`)
  responses.forEach((response, i) => {
    const e = expected[i]
    // An answer to HEAD has the headers of the problem, without its body.
    if (typeof e === 'string' && c.heads?.[i] !== true) assertProblem(asTestResponse(response), e)
    assertAnswerHeaders(response, tier, `${tier.name}, ${c.name}, answer ${i + 1}`)
  })
  assert.equal(responses.at(-1)?.headers.connection, 'close', `${tier.name}, ${c.name}: the last answer says the connection closes`)
  c.check?.(responses, tier)
  // Each answered request leaves one line with its request id; nothing else does.
  const lines = await pollUntil(`${tier.name}, ${c.name}: ${responses.length} log lines`, () => {
    const now = tier.requestLines().slice(linesBefore)
    return now.length >= responses.length && now
  })
  assert.deepEqual(lines.map((line) => line.reqId).sort(), responses.map((r) => r.headers['x-request-id']).sort(), `${tier.name}, ${c.name}: one log line per answer, with its id`)
  assert.equal(tier.calls() - callsBefore, typeof c.calls === 'number' ? c.calls : c.calls(tier), `${tier.name}, ${c.name}: work done`)
  return responses
}

/** `n` requests of `X-Pad-i: value`. */
export const fields = (n: number, value = 'v'): string => Array.from({ length: n }, (_, i) => `X-Pad-${i}: ${value}\r\n`).join('')

/** Declares each case as a test on each tier, over connections of its own. */
export function describeCases (cases: readonly Case[]): void {
  for (const start of [startEdgeFront, startEdgePostsApi]) {
    describe(start === startEdgeFront ? 'front' : 'post API', () => {
      let tier: EdgeTier
      before(async () => { tier = await start() })
      after(async () => await tier.close())
      for (const c of cases) test(c.name, async () => { await run(tier, c) })
    })
  }
}
