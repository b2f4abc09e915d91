// The front over several upstreams on loopback, where sockets matter: a refusing
// upstream costs no failed request and leaves rotation; an upstream shutting down (503 with
// Connection: close) is tried elsewhere; a busy upstream gets fewer calls.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { test } from 'node:test'
import { freePort, json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { startFront } from '../helpers/tiers.js'

/** A post API without readiness: the post asked for, and 404 on /readyz. */
const posts = (req: { url?: string }, res: ServerResponse): void => {
  if (req.url === '/readyz') json(res, 404, { title: 'Not found' })
  else json(res, 200, post(req))
}
const post = (req: { url?: string }): unknown => ({ slug: req.url?.split('/').pop(), title: 'Hello' })

test('two upstreams, one refusing: every answer 200; after 3 refusals only probes try it', async (t) => {
  const refusing = new URL(`http://127.0.0.1:${await freePort()}`)
  const up = await startFakeUpstream(posts)
  const front = await startFront([refusing, up.url], { ejectFailures: 3, probeIntervalMs: 50 })
  t.after(async () => {
    await front.app.close()
    await up.close()
  })
  const statuses = []
  for (let i = 0; i < 20; i++) statuses.push((await get(front.url, '/api/blog/hello-world')).status)
  assert.deepEqual(statuses, Array(20).fill(200))
  assert.equal(up.requests.length, 20)
  // 20 in parallel: none fails either.
  const burst = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await get(front.url, `/api/blog/post-${i}`)).status))
  assert.deepEqual(burst, Array(20).fill(200))
})

test('an upstream shutting down (503 with Connection: close) is tried on the other: 200, and it gets no more calls', async (t) => {
  const draining = await startFakeUpstream((req, res) => {
    if (req.url === '/readyz') return json(res, 503, { title: 'Shutting down' }, { connection: 'close' })
    json(res, 503, { type: 'urn:blog-read-api:problem:shutting-down' }, { connection: 'close', 'retry-after': '5' })
  })
  const up = await startFakeUpstream(posts)
  const front = await startFront([draining.url, up.url], { ejectFailures: 3, probeIntervalMs: 50 })
  t.after(async () => {
    await front.app.close()
    await draining.close()
    await up.close()
  })
  const statuses = []
  for (let i = 0; i < 10; i++) statuses.push((await get(front.url, '/api/blog/hello-world')).status)
  assert.deepEqual(statuses, Array(10).fill(200))
  const calls = draining.requests.filter((r) => r.url !== '/readyz').length
  assert.equal(calls, 3, 'taken out after 3 answers of a draining upstream')
})

test('a busy upstream gets fewer calls: each call goes where the fewest are pending', async (t) => {
  let arrived!: (release: () => void) => void
  const held = new Promise<() => void>((resolve) => { arrived = resolve })
  const slow = await startFakeUpstream((req, res) => {
    if (req.url === '/api/post/slow') arrived(() => json(res, 200, post(req)))
    else posts(req, res)
  })
  const fast = await startFakeUpstream(posts)
  const front = await startFront([slow.url, fast.url])
  t.after(async () => {
    // The upstreams first: a call still held there ends, so the front can close.
    await slow.close()
    await fast.close()
    await front.app.close()
  })
  const pending = get(front.url, '/api/blog/slow')
  const release = await held
  for (let i = 0; i < 4; i++) assert.equal((await get(front.url, `/api/blog/post-${i}`)).status, 200)
  assert.deepEqual(slow.requests.map((r) => r.url), ['/api/post/slow'], 'round-robin alone would have sent it two')
  assert.equal(fast.requests.length, 4)
  release()
  assert.equal((await pending).status, 200)
})
