// Hostile HTTP at the edge, over raw sockets, on both tiers: pipelined requests are answered
// exactly once each, in order, as a problem document when they are errors (with the headers of
// any answer, a HEAD's without a body); nothing behind an answer that closes the connection is
// worked on; every answered request leaves exactly one log line with its request id; and, at the
// front, a client that leaves or is too slow. Each case counts the work done (the front's
// upstream calls, the post API's store reads) and the log lines. The head's limits, methods,
// bodies and the request line have files of their own in test/edge/.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import type { Server } from 'node:http'
import { after, before, describe, test } from 'node:test'
import type { ProblemKind } from '../../src/contract/problems.js'
import { MISSING_SLUG, startEdgeFront, upstreamAnswers, type EdgeTier } from '../helpers/edge-tiers.js'
import { json, type FakeUpstream } from '../helpers/fake-upstream.js'
import { logSink } from '../helpers/log-sink.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { asTestResponse, rawSession } from '../helpers/raw-http.js'
import { buildTestFront, listen } from '../helpers/tiers.js'
import { assertAnswerHeaders, closing, describeCases, HOST, request, slug, UNIQUE_UUID, type Case } from './edge-case.js'

const CASES: Case[] = [
  // Work for requests that are never answered.
  {
    name: 'a GET with a body, then five pipelined GETs: one 413, no upstream call',
    bytes: (t) => request('GET', t.list, 'Content-Length: 5\r\n') + 'hello' + [1, 2, 3, 4, 5].map((i) => request('GET', t.item(slug(i)))).join(''),
    expect: () => ['body-not-allowed'],
    calls: 0
  },
  {
    name: 'a valid GET, then a malformed request in the same packet: the GET answered first, then the 400',
    bytes: (t) => request('GET', t.item(slug(1))) + 'GET /x HTTP/1.1\r\nHost t\r\n\r\n',
    expect: () => [200, 'bad-request'],
    calls: 1
  },
  {
    name: 'GETs around a GET with a body: those before it answered, those after it never worked on',
    bytes: (t) => request('GET', t.item(slug(2))) + request('GET', t.list, 'Content-Length: 5\r\n') + 'hello' + request('GET', t.item(slug(3))),
    expect: () => [200, 'body-not-allowed'],
    calls: 1
  },
  {
    name: 'a request with Connection: close, then two pipelined GETs: only the first is worked on',
    bytes: (t) => request('GET', t.item(slug(4)), 'Connection: close\r\n') + request('GET', t.item(slug(5))) + request('GET', t.item(slug(6))),
    expect: () => [200],
    calls: 1
  },
  {
    name: 'an HTTP/1.0 request (no keep-alive), then a pipelined GET: only the first is worked on',
    bytes: (t) => request('GET', t.item(slug(7)), '', 'HTTP/1.0') + request('GET', t.item(slug(8))),
    expect: () => [200],
    calls: 1
  },
  {
    name: 'five valid pipelined GETs: five answers in order, one call each',
    bytes: (t) => [9, 10, 11, 12, 13].map((i) => request('GET', t.item(slug(i)), `X-Request-Id: order-${i}\r\n`)).join('') + closing(t),
    expect: () => [200, 200, 200, 200, 200, 200],
    calls: 6,
    check: (responses) => {
      assert.deepEqual(responses.slice(0, 5).map((r) => r.headers['x-request-id']), ['order-9', 'order-10', 'order-11', 'order-12', 'order-13'])
      assert.deepEqual(responses.slice(0, 5).map((r) => (JSON.parse(r.body.toString()) as { slug: string }).slug), [9, 10, 11, 12, 13].map(slug))
    }
  },
  {
    name: 'HEAD of a problem: its headers, no body',
    bytes: (t) => request('HEAD', '/nowhere') + request('HEAD', t.list, 'Content-Length: 5\r\n'),
    expect: () => ['not-found', 'body-not-allowed'].map((kind) => kind as ProblemKind),
    heads: [true, true],
    calls: 0,
    check: (responses) => {
      for (const response of responses) assert.equal(response.body.length, 0)
    }
  },
  // Content negotiation and a missing post, as raw requests.
  {
    name: 'Accept-Encoding: gzip;q=0, * is served br, never gzip',
    bytes: (t) => request('GET', t.list, 'Accept-Encoding: gzip;q=0, *\r\n') + request('GET', t.list, 'Accept-Encoding: gzip;q=0, br;q=0, *\r\n') + closing(t),
    expect: () => [200, 200, 200],
    // The front coalesces: the second and third share the call that follows the first.
    calls: (t) => t.name === 'front' ? 2 : 3,
    check: ([starred, neither]) => {
      assert.equal(starred?.headers['content-encoding'], 'br')
      assert.equal(neither?.headers['content-encoding'], undefined)
    }
  },
  {
    name: 'a post the store does not have: 404 from the upstream, after one call',
    bytes: (t) => request('GET', t.item(MISSING_SLUG), 'Connection: close\r\n'),
    expect: () => ['post-not-found'],
    calls: 1
  }
]

describeCases(CASES)

describe('front: answers that wait on the clock or on other clients', () => {
  let tier: EdgeTier & { upstream: FakeUpstream }
  before(async () => { tier = await startEdgeFront() })
  after(async () => await tier.close())

  test('a client that leaves while waiting for a coalesced call: no call is made for it, and its line says it left', async () => {
    const held: Array<() => void> = []
    tier.upstream.behave((req, res) => {
      if (req.url === '/api/post/held') held.push(() => json(res, 200, { slug: 'held' }))
      else json(res, 200, { slug: decodeURIComponent(req.url?.slice('/api/post/'.length) ?? '') })
    })
    const heldCalls = (): number => tier.upstream.requests.filter((r) => r.url === '/api/post/held').length
    // A asks first: its call is held at the upstream.
    const first = rawSession(tier.port, request('GET', '/api/blog/held', 'Connection: close\r\nX-Request-Id: first\r\n'))
    await pollUntil('the first call at the upstream', () => held.length === 1)
    // B asks while that call runs: it waits for the next call, then leaves.
    let arrived = false
    tier.app.server.once('request', () => { arrived = true })
    const leaving = connect(tier.port, '127.0.0.1', () => leaving.write(request('GET', '/api/blog/held', 'X-Request-Id: leaving\r\n')))
    leaving.on('error', () => {})
    await pollUntil('the second request at the front', () => arrived)
    leaving.destroy()
    const abort = await pollUntil('the leaving client\'s line', () => tier.requestLines().find((line) => line.reqId === 'leaving'))
    assert.equal(abort.aborted, true)
    held.shift()?.()
    const { responses } = await first
    assert.equal(responses[0]?.status, 200)
    // A request after both: the upstream saw the first call, none for B.
    const { responses: [later] } = await rawSession(tier.port, request('GET', '/api/blog/other', 'Connection: close\r\n'))
    assert.equal(later?.status, 200)
    assert.equal(heldCalls(), 1, 'no call for the client who left')
    tier.upstream.behave(upstreamAnswers)
  })

  test('the parser\'s 408 for a request not sent in time: a problem with every header, logged with its id', async () => {
    const sink = logSink('info')
    const app = buildTestFront(tier.upstream.url, { logger: sink.logger })
    app.server.headersTimeout = 300
    app.server.requestTimeout = 600
    ;(app.server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 50
    const short = await listen(app)
    try {
      const { responses: [answer] } = await rawSession(short.port, `GET /api/blog HTTP/1.1\r\n${HOST}X-Slow: `)
      assert.ok(answer !== undefined)
      assertProblem(asTestResponse(answer), 'request-timeout')
      assertAnswerHeaders(answer, { ...tier, cors: true }, '408')
      assert.match(answer.headers['x-request-id'] ?? '', UNIQUE_UUID)
      const [line, ...more] = sink.lines.filter((l) => l.msg === 'request')
      assert.equal(line?.reqId, answer.headers['x-request-id'])
      assert.equal(line?.status, 408)
      assert.deepEqual(more, [])
    } finally {
      await short.app.close()
    }
  })
})
