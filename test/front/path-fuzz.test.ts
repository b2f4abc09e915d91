// Property-based fuzzing of the front's path over a raw socket:
// 10,000 generated request targets per run, sent byte for byte, against a front wired to a fake
// upstream that records every request reaching it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { expectationFor, isAllowedUpstreamPath, requestTarget, type Expectation } from '../helpers/fuzz-paths.js'
import type { TestResponse } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { rawExchange, RawKeepAliveClient, type RawResponse } from '../helpers/raw-http.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'

const RUNS = 10_000
const ALLOWED_STATUSES = new Set([200, 400, 404, 405, 431])

let upstream: FakeUpstream
let front: RunningApp
let client: RawKeepAliveClient

before(async () => {
  // Answers like a healthy post API holding every post asked for, so a valid slug is a 200.
  upstream = await startFakeUpstream((req, res) => {
    const url = req.url ?? ''
    if (url === '/api/posts') return json(res, 200, [{ slug: 'a' }])
    try {
      if (url.startsWith('/api/post/')) return json(res, 200, { slug: decodeURIComponent(url.slice('/api/post/'.length)) })
    } catch {}
    json(res, 404, { title: 'Not found' })
  })
  front = await startFront(upstream.url)
  client = new RawKeepAliveClient(front.port)
})
after(async () => {
  client.close()
  await front.app.close()
  await upstream.close()
})

const asTestResponse = (r: RawResponse): TestResponse => {
  const text = r.body.toString('utf8')
  return { status: r.status, headers: r.headers, text, json: () => JSON.parse(text) }
}

/** Holds for every response, whatever the target: no 5xx, and every 4xx a problem document. */
function assertWellFormed (response: RawResponse): void {
  assert.ok(ALLOWED_STATUSES.has(response.status), `status ${response.status}: ${response.body.toString('utf8')}`)
  if (response.status >= 400) {
    assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/)
    assert.equal((JSON.parse(response.body.toString('utf8')) as { status?: unknown }).status, response.status)
  }
}

function assertExpected (expectation: Expectation, response: RawResponse, hits: string[]): void {
  switch (expectation.kind) {
    case 'slug':
      if (expectation.valid) {
        assert.equal(response.status, 200, `valid slug ${JSON.stringify(expectation.slug)}: ${response.body.toString('utf8')}`)
        assert.deepEqual(JSON.parse(response.body.toString('utf8')), { slug: expectation.slug })
        assert.deepEqual(hits, ['/api/post/' + encodeURIComponent(expectation.slug)], 'one upstream call, with exactly the encoded slug')
      } else {
        assertProblem(asTestResponse(response), 'invalid-slug')
        assert.deepEqual(hits, [], `no upstream call for ${JSON.stringify(expectation.slug)}`)
      }
      break
    case 'bad-request':
      assertProblem(asTestResponse(response), 'bad-request')
      assert.deepEqual(hits, [])
      break
    case 'loose':
      break
  }
}

test(`${RUNS} generated paths: no 5xx, problem+json on 4xx, the upstream called only for valid slugs`, { timeout: 120_000 }, async (t) => {
  const seen = { slug: 0, valid: 0, 'bad-request': 0, loose: 0, ownConnection: 0 }
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
  await fc.assert(fc.asyncProperty(requestTarget, async (latin1) => {
    const target = Buffer.from(latin1, 'latin1')
    const expectation = expectationFor(target)
    seen[expectation.kind]++
    if (expectation.kind === 'slug' && expectation.valid) seen.valid++
    const start = upstream.requests.length
    // Raw bytes outside visible ASCII make Node's parser answer 400 and close (CR/LF could even
    // frame a second request), so they get a connection of their own, read to its end.
    const visible = !target.some((byte) => byte < 0x21 || byte > 0x7e)
    if (!visible) seen.ownConnection++
    const responses = visible ? [await client.get(target)] : await rawExchange(front.port, target)
    const hits = upstream.requests.slice(start).map((r) => r.url ?? '')
    const where = `target ${JSON.stringify(latin1)}`
    assert.ok(responses.length >= 1, `no response for ${where}`)
    for (const response of responses) assertWellFormed(response)
    for (const hit of hits) assert.ok(isAllowedUpstreamPath(hit), `upstream asked for ${JSON.stringify(hit)} by ${where}`)
    assertExpected(expectation, responses[0] as RawResponse, hits)
  }), { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })

  t.diagnostic(`targets: ${JSON.stringify(seen)}; keep-alive connections opened: ${client.connections}`)
  // The generators must keep reaching every branch, or the oracle checks nothing.
  assert.ok(seen.valid >= RUNS * 0.1, 'at least 10% valid slugs (relayed)')
  assert.ok(seen.slug - seen.valid >= RUNS * 0.1, 'at least 10% invalid slugs')
  assert.ok(seen['bad-request'] >= RUNS * 0.01, 'at least 1% malformed encodings')
  assert.ok(seen.loose >= RUNS * 0.05, 'at least 5% raw bytes or other routes')

  // The process survived and still serves, on a fresh connection as on the kept one.
  assert.equal((await client.get(Buffer.from('/api/blog/hello-world'))).status, 200)
  assert.equal((await rawExchange(front.port, Buffer.from('/api/blog/hello-world')))[0]?.status, 200)
})
