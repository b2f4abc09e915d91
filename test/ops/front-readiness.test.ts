// The front's readiness follows its upstreams in rotation: 503
// not-ready once its only upstream has been taken out of rotation, 200 again as soon as that
// upstream answers a probe, with no client request needed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { parseMetrics, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront } from '../helpers/tiers.js'

test('the front is 503 not-ready while its upstream is down, and 200 after, by itself', { timeout: 20_000 }, async () => {
  let upstream = await startFakeUpstream((_req, res) => json(res, 200, { slug: 'hello-world' }))
  const port = Number(upstream.url.port)
  const front = await startFront(upstream.url, { ejectFailures: 1, probeIntervalMs: 50, metrics: createProcessMetrics() })
  const inRotation = async (): Promise<number> => valueOf(parseMetrics((await get(front.url, '/metrics')).text), 'blog_read_api_upstreams_in_rotation')
  try {
    assert.equal((await get(front.url, '/readyz')).status, 200)
    await upstream.close()
    // A refused call takes the only upstream out of rotation.
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 502)
    const down = await get(front.url, '/readyz')
    assert.equal(assertProblem(down, 'not-ready').detail, 'No upstream post API is in rotation.')
    assert.equal(await inRotation(), 0)
    assert.equal((await get(front.url, '/healthz')).status, 200, 'alive all the same')

    upstream = await startFakeUpstream((_req, res) => json(res, 200, { slug: 'hello-world' }), port)
    await pollUntil('ready again once the upstream answers its probe', async () => (await get(front.url, '/readyz')).status === 200, { withinMs: 10_000, everyMs: 50 })
    assert.equal(await inRotation(), 1)
    assert.ok(upstream.requests.some((req) => req.url === '/readyz'), 'brought back by a probe')
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)
  } finally {
    await front.app.close()
    await upstream.close()
  }
})
