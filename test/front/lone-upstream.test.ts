// A lone upstream out of rotation is still tried (panic routing): the front never answers for it
// a 502 it did not cause. One fake upstream with only the post API's two routes goes, case right
// after case, through 503s, resets (which take it out of rotation), 503s and a hang while out,
// and recovery; the probes' timers are the test's and never run, so whatever brings the
// upstream back is a call, not a probe.
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { test } from 'node:test'
import { buildFrontApp } from '../../src/front/app.js'
import { openUpstreamClient } from '../../src/front/upstream/client.js'
import { frontAppOptions, upstreamClientOptions } from '../../src/process/tier-options.js'
import { testConfig } from '../helpers/config.js'
import { json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { createManualTimers } from '../helpers/manual-timers.js'
import { assertProblem } from '../helpers/problem.js'
import { listen, silentLogger } from '../helpers/tiers.js'

type Mode = 'serve' | 'reset' | 'unavailable' | 'hang'

const POST = { slug: 'hello-world', title: 'Hello' }

test('a lone upstream out of rotation: its 503s are relayed, a hang is a 504, and it serves again at its first answer', async (t) => {
  let mode: Mode = 'serve'
  /** Only GET /api/posts and GET /api/post/:slug, as another implementation of the post API might be. */
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url === '/api/posts') json(res, 200, [POST])
    else if (req.url?.startsWith('/api/post/') === true) json(res, 200, { ...POST, slug: req.url.slice('/api/post/'.length) })
    else json(res, 404, { title: 'Not found' })
  }
  const upstream = await startFakeUpstream((req, res) => {
    if (mode === 'serve') serve(req, res)
    else if (mode === 'reset') req.socket.resetAndDestroy()
    else if (mode === 'unavailable') json(res, 503, { title: 'Unavailable' }, { 'retry-after': '7' })
  })
  const timers = createManualTimers()
  const config = testConfig({ UPSTREAM_TIMEOUT_MS: '300', UPSTREAM_EJECT_FAILURES: '2', UPSTREAM_PROBE_INTERVAL_MS: '1000' })
  const client = openUpstreamClient([upstream.url], { ...upstreamClientOptions(config), timers })
  const front = await listen(buildFrontApp({ ...frontAppOptions(config, { upstream: client, logger: silentLogger }), apiDocs: false }))
  t.after(async () => {
    await upstream.close()
    await front.app.close()
    await client.close()
  })
  /** GETs `path` at the front; `calls` is how many requests reached the upstream meanwhile. */
  const through = async (path: string): Promise<{ response: Awaited<ReturnType<typeof get>>, calls: number }> => {
    const before = upstream.requests.length
    const response = await get(front.url, path)
    return { response, calls: upstream.requests.length - before }
  }
  const ready = async (): Promise<number> => (await get(front.url, '/readyz')).status

  // Serving.
  assert.equal((await through('/api/blog/hello-world')).response.status, 200)
  assert.equal((await through('/api/blog')).response.status, 200)

  // 503s while in rotation: relayed with their Retry-After, never counted against it.
  mode = 'unavailable'
  for (let i = 0; i < 4; i++) {
    const { response, calls } = await through('/api/blog/hello-world')
    assertProblem(response, 'upstream-unavailable')
    assert.equal(response.headers['retry-after'], '7')
    assert.equal(calls, 1)
  }
  assert.equal(await ready(), 200, 'a 503 does not eject')

  // Two resets (a call and its retry on a fresh connection) take it out of rotation.
  mode = 'reset'
  const reset = await through('/api/blog/hello-world')
  assertProblem(reset.response, 'upstream-unreachable')
  assert.equal(reset.calls, 2)
  assert.equal(await ready(), 503)
  // Out of rotation, it is still tried: the 502 is its own, with a Retry-After of one probe interval.
  const again = await through('/api/blog')
  assertProblem(again.response, 'upstream-unreachable')
  assert.ok(again.calls >= 1, 'the front answered without calling it')
  assert.equal(again.response.headers['retry-after'], '1')

  // Out of rotation and answering 503: relayed as its 503, never a 502 "could not be reached".
  mode = 'unavailable'
  for (const path of ['/api/blog/hello-world', '/api/blog']) {
    const { response, calls } = await through(path)
    assertProblem(response, 'upstream-unavailable')
    assert.equal(response.headers['retry-after'], '7')
    assert.equal(calls, 1)
  }
  assert.equal(await ready(), 503, 'a 503 does not bring it back either')

  // Out of rotation and hanging: a 504 after the time-out, not a 502 at once.
  mode = 'hang'
  const hung = await through('/api/blog/hello-world')
  assertProblem(hung.response, 'upstream-timeout')
  assert.equal(hung.calls, 1)

  // Recovered: the very next request is served, and its answer brings the upstream back, no probe needed.
  mode = 'serve'
  const recovered = await through('/api/blog/hello-world')
  assert.equal(recovered.response.status, 200)
  assert.deepEqual(recovered.response.json(), POST)
  assert.equal(await ready(), 200)
  assert.equal(upstream.requests.filter((req) => req.url === '/readyz').length, 0, 'no probe ran')
  assert.equal(timers.pending(), 0, 'the waiting probe was cancelled')
})
