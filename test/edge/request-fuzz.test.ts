// Property-based fuzzing of whole requests at the edge, on both tiers: fast-check
// generates pipelined sequences of requests (request lines, header sets, bodies; well-formed or
// hostile), each sent at once on a connection of its own, ending with a request that asks to
// close. For every sequence: every response parses as HTTP and is a problem document when it is
// an error; exactly the requests up to the first whose answer closes the connection are
// answered, in order, as the oracle says; the work done (upstream calls, store reads) never
// exceeds the requests answered from such work; each answer leaves one log line with its id.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { PROBLEM_TYPE_BASE, PROBLEMS } from '../../src/contract/problems.js'
import { startEdgeFront, startEdgePostsApi, type EdgeTier } from '../helpers/edge-tiers.js'
import { generatedRequest, sentinel, type GeneratedRequest } from '../helpers/fuzz-requests.js'
import { pollUntil } from '../helpers/poll.js'
import { rawSession, type RawResponse } from '../helpers/raw-http.js'

/** Generated sequences per tier; with 1 to 8 requests each, well over 5,000 requests in all. */
const SEQUENCES = 800
const MIN_REQUESTS = 5000
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)

let generated = 0

/** The answers a sequence gets: up to the first whose answer closes the connection. */
function answeredOf (sequence: readonly GeneratedRequest[]): GeneratedRequest[] {
  const closing = sequence.findIndex((request) => request.closes)
  return closing === -1 ? [...sequence] : sequence.slice(0, closing + 1)
}

function assertAnswer (response: RawResponse, request: GeneratedRequest, where: string): void {
  const status = typeof request.expect === 'number' ? request.expect : PROBLEMS[request.expect].status
  assert.equal(response.status, status, `${where}: status (${response.body.toString('utf8', 0, 300)})`)
  assert.ok((response.headers['x-request-id'] ?? '') !== '', `${where}: X-Request-Id`)
  if (request.requestId !== undefined) assert.equal(response.headers['x-request-id'], request.requestId, `${where}: the request id echoed`)
  assert.equal(response.headers['x-content-type-options'], 'nosniff', `${where}: security headers`)
  if (typeof request.expect === 'string') {
    assert.equal(response.headers['content-type'], 'application/problem+json', `${where}: problem content type`)
    if (!request.head) {
      const body = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>
      assert.equal(body.type, PROBLEM_TYPE_BASE + request.expect, `${where}: problem type`)
      assert.equal(body.status, status, `${where}: problem status`)
    }
  }
  if (status === 405 || status === 413) assert.equal(response.headers.allow, 'GET, HEAD', `${where}: Allow`)
}

async function check (tier: EdgeTier, sequence: readonly GeneratedRequest[], tally: Map<string, number>): Promise<void> {
  generated += sequence.length
  const all = [...sequence, sentinel(tier)]
  const answered = answeredOf(all)
  for (const request of all) tally.set(request.label.replace(/ .*/, ''), (tally.get(request.label.replace(/ .*/, '')) ?? 0) + 1)
  const callsBefore = tier.calls()
  const linesBefore = tier.requestLines().length
  const where = (i: number): string => `${tier.name}, request ${i + 1} of ${JSON.stringify(all.map((r) => r.label))}`
  const { responses } = await rawSession(tier.port, all.map((request) => request.bytes).join(''), { heads: answered.map((request) => request.head) })
  assert.equal(responses.length, answered.length, `${where(responses.length)}: ${responses.length} answers for ${answered.length} requests up to the first closing (statuses ${JSON.stringify(responses.map((r) => r.status))})`)
  responses.forEach((response, i) => assertAnswer(response, answered[i] as GeneratedRequest, where(i)))
  const calls = tier.calls() - callsBefore
  const worked = answered.filter((request) => request.work).length
  assert.ok(calls <= worked, `${where(0)}: ${calls} calls for ${worked} requests answered from such work`)
  const lines = await pollUntil(`${where(0)}: a line per answer`, () => {
    const now = tier.requestLines().slice(linesBefore)
    return now.length >= responses.length && now
  }, { everyMs: 1 })
  assert.deepEqual(lines.map((line) => line.reqId).sort(), responses.map((r) => r.headers['x-request-id']).sort(), `${where(0)}: one log line per answer, with its id`)
}

for (const start of [startEdgeFront, startEdgePostsApi]) {
  describe(start === startEdgeFront ? 'front' : 'post API', () => {
    let tier: EdgeTier
    before(async () => { tier = await start() })
    after(async () => await tier.close())

    test(`${SEQUENCES} generated pipelined sequences: each answered exactly up to its first closing answer, in our format, with no work for what is not answered`, { timeout: 120_000 }, async (t) => {
      const tally = new Map<string, number>()
      await fc.assert(fc.asyncProperty(fc.array(generatedRequest(tier), { minLength: 1, maxLength: 8, size: 'max' }), async (sequence) => {
        await check(tier, sequence, tally)
      }), { numRuns: SEQUENCES, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`kinds: ${JSON.stringify(Object.fromEntries([...tally].sort(([, a], [, b]) => b - a)))}`)
      // The generator must keep reaching every branch, or the oracle checks nothing.
      for (const kind of ['served', 'GET', 'HTTP/2.0', 'malformed', 'too', 'Connection:', 'unknown']) {
        assert.ok((tally.get(kind) ?? 0) >= SEQUENCES / 50, `kind ${kind} generated ${tally.get(kind) ?? 0} times`)
      }
    })
  })
}

test(`at least ${MIN_REQUESTS} generated requests in all`, () => {
  assert.ok(generated >= MIN_REQUESTS, `${generated} requests generated`)
})
