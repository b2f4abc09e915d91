// Load shedding: past `loadShedDelayMs` of event-loop delay the
// front answers 503 `overloaded` with Retry-After at once, without calling the upstream, and
// serves again once the loop is free.
//
// How it is made deterministic: @fastify/under-pressure samples the mean event-loop delay (10 ms
// resolution) once per `sampleInterval` (default 1000 ms, which the app keeps) and sheds while the
// last sample is over the threshold. A single long block would be averaged away by the idle 10 ms
// samples around it, so the test blocks in 200 ms slices with only a yield between them: every
// delay sample is then about 200 ms, whatever the timing. It stops blocking once the plugin has
// taken a sample over the threshold (read through its `memoryUsage()` decoration), and only then
// sends requests, which must be shed until the next sample, about a second later.
import assert from 'node:assert/strict'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { test } from 'node:test'
import { testConfig } from '../helpers/config.js'
import { json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { logSink } from '../helpers/log-sink.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront } from '../helpers/tiers.js'

function blockFor (ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) { /* a saturated event loop */ }
}

test('a saturated event loop: 503 overloaded with Retry-After, upstream not called, then 200 again', { timeout: 20_000 }, async () => {
  const { logger, lines: warnings } = logSink('warn')
  const upstream = await startFakeUpstream((_req, res) => json(res, 200, { slug: 'hello-world' }))
  const front = await startFront(upstream.url, { logger, server: testConfig({ LOAD_SHED_DELAY_MS: '50' }).server })
  const pressure = front.app as unknown as { memoryUsage: () => { eventLoopDelay: number } }
  try {
    assert.equal((await get(front.url, '/api/blog/hello-world')).status, 200)

    const started = performance.now()
    while (pressure.memoryUsage().eventLoopDelay <= 50) {
      assert.ok(performance.now() - started < 5000, 'under-pressure never measured the blocked loop')
      blockFor(200)
      await yieldToLoop()
    }
    const hits = upstream.requests.length
    // All shed, hence all answered before the plugin's next sample (a second later): at once.
    const shed = await Promise.all(Array.from({ length: 5 }, () => get(front.url, '/api/blog/hello-world')))
    for (const response of shed) {
      assertProblem(response, 'overloaded')
      assert.match(String(response.headers['retry-after']), /^[1-9]\d*$/)
    }
    assert.equal(upstream.requests.length, hits, 'shed requests never reach the upstream')

    // The loop is free again: the next samples are low and requests are served.
    const served = await pollUntil('an answer other than 503 after the loop was freed', async () => {
      const response = await get(front.url, '/api/blog/hello-world')
      return response.status === 503 ? false : response
    }, { withinMs: 10_000, everyMs: 100 })
    assert.equal(served.status, 200)
    // Shedding is not an error of the server: nothing but the expected is logged at warn or above.
    assert.deepEqual(warnings.map((w) => w.err?.code ?? w.msg), [])
  } finally {
    await front.app.close()
    await upstream.close()
  }
})
