// HTTP behaviour of the front over a fake upstream: conditional revalidation, ETag/304,
// compression, coalescing that never serves a call older than the request, streamed lists.
import assert from 'node:assert/strict'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { after, before, test } from 'node:test'
import { request } from 'undici'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { parseMetrics, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'
import { etagOf } from '../../src/http/representation.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream()
  front = await startFront(upstream.url, { listBufferLimit: 4096 })
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

/** Answers like the real post API: strong ETag from the bytes, 304 when If-None-Match holds. */
function serveWithEtag (body: string): void {
  const etag = etagOf(Buffer.from(body))
  upstream.behave((req, res) => {
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag })
      res.end()
    } else {
      json(res, 200, body, { etag })
    }
  })
}

const post = (slug: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ slug, title: slug, content: 'x'.repeat(2000), ...extra })

test('the front revalidates its copy with If-None-Match and serves it on 304', async () => {
  const body = post('kept')
  serveWithEtag(body)
  const first = await get(front.url, '/api/blog/kept')
  const second = await get(front.url, '/api/blog/kept')
  assert.equal(first.text, body)
  assert.equal(second.text, body)
  assert.equal(second.status, 200)
  const [call1, call2] = upstream.requests.slice(-2)
  assert.equal(call1?.headers['if-none-match'], undefined)
  assert.equal(call2?.headers['if-none-match'], etagOf(Buffer.from(body)))
})

test('a changed upstream body is served at once', async () => {
  serveWithEtag(post('changing', { title: 'v1' }))
  assert.equal(((await get(front.url, '/api/blog/changing')).json() as { title: string }).title, 'v1')
  serveWithEtag(post('changing', { title: 'v2' }))
  assert.equal(((await get(front.url, '/api/blog/changing')).json() as { title: string }).title, 'v2')
})

test('strong ETag, 304 on If-None-Match, Vary and Cache-Control', async () => {
  serveWithEtag(post('tagged'))
  const first = await get(front.url, '/api/blog/tagged')
  const etag = String(first.headers.etag)
  assert.match(etag, /^"[^"]+"$/)
  assert.equal(first.headers['cache-control'], 'no-cache')
  assert.match(String(first.headers.vary), /accept-encoding/i)
  const revalidated = await get(front.url, '/api/blog/tagged', { 'if-none-match': etag })
  assert.equal(revalidated.status, 304)
  assert.equal(revalidated.text, '')
  assert.equal(revalidated.headers.etag, etag)
  assert.equal((await get(front.url, '/api/blog/tagged', { 'if-none-match': `"other", W/${etag}` })).status, 304)
  assert.equal((await get(front.url, '/api/blog/tagged', { 'if-none-match': '"other"' })).status, 200)
})

test('bodies are compressed with br or gzip when accepted, with their own ETags', async () => {
  const body = post('squeezed')
  serveWithEtag(body)
  const br = await request(`${front.url}/api/blog/squeezed`, { headers: { 'accept-encoding': 'gzip, br' } })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.equal(brotliDecompressSync(Buffer.from(await br.body.arrayBuffer())).toString(), body)
  const gz = await request(`${front.url}/api/blog/squeezed`, { headers: { 'accept-encoding': 'gzip, br;q=0' } })
  assert.equal(gz.headers['content-encoding'], 'gzip')
  assert.equal(gunzipSync(Buffer.from(await gz.body.arrayBuffer())).toString(), body)
  assert.notEqual(br.headers.etag, gz.headers.etag)
  // q-values decide, and `*` never stands for a refused coding.
  for (const acceptEncoding of ['br;q=0.1, gzip', 'br;q=0, *']) {
    const weighed = await request(`${front.url}/api/blog/squeezed`, { headers: { 'accept-encoding': acceptEncoding } })
    assert.equal(weighed.headers['content-encoding'], 'gzip', acceptEncoding)
    assert.equal(gunzipSync(Buffer.from(await weighed.body.arrayBuffer())).toString(), body)
  }
  assert.equal((await get(front.url, '/api/blog/squeezed', { 'if-none-match': String(gz.headers.etag) })).status, 304)
  serveWithEtag(post('tiny').slice(0, 0) + JSON.stringify({ slug: 'tiny' }))
  const small = await request(`${front.url}/api/blog/tiny`, { headers: { 'accept-encoding': 'br' } })
  await small.body.text()
  assert.equal(small.headers['content-encoding'], undefined, 'small bodies are not compressed')
})

test('identical concurrent requests share upstream calls, never one that started before them', async () => {
  // The upstream answers each call when the test lets it, so that requests are sent while a call
  // runs, whatever the machine's speed.
  const starts: number[] = []
  const held: Array<() => void> = []
  upstream.behave((_req, res) => {
    const call = starts.push(performance.now())
    held.push(() => json(res, 200, post('busy', { call })))
  })
  // Its metrics count the requests that joined a call instead of starting one.
  const counted = await startFront(upstream.url, { metrics: createProcessMetrics() })
  const joined = async (): Promise<number> => valueOf(parseMetrics((await get(counted.url, '/metrics')).text), 'blog_read_api_upstream_coalesced_requests_total')
  const send = async (): Promise<{ sent: number, call: number }> => {
    const sent = performance.now()
    const response = await get(counted.url, '/api/blog/busy')
    return { sent, call: (response.json() as { call: number }).call }
  }
  let results: Array<{ sent: number, call: number }>
  try {
    const first = send()
    await pollUntil('the first call reached the upstream', () => starts.length === 1)
    const latecomers = Array.from({ length: 10 }, send)
    await pollUntil('the latecomers joined the next call', async () => await joined() === latecomers.length)
    held.shift()?.()
    await pollUntil('the next call reached the upstream', () => starts.length === 2)
    held.shift()?.()
    results = [await first, ...await Promise.all(latecomers)]
  } finally {
    for (const answer of held.splice(0)) answer()
    await counted.app.close()
  }
  assert.equal(starts.length, 2, `${starts.length} upstream calls for 11 requests`)
  assert.deepEqual(results.map((r) => r.call), [1, ...Array(10).fill(2)], 'the latecomers shared the call after the one running when they came')
  for (const { sent, call } of results) {
    assert.ok((starts[call - 1] ?? 0) >= sent, `a request sent at ${sent} got call ${call}, started at ${starts[call - 1]}`)
  }
})

test('a list above the buffer limit is streamed through', async () => {
  const list = JSON.stringify(Array.from({ length: 20 }, (_, i) => JSON.parse(post(`p${i}`))))
  upstream.behave((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(list)
  })
  const response = await get(front.url, '/api/blog')
  assert.equal(response.status, 200)
  assert.equal(response.text, list)
})

test('concurrent requests for a streamed list each get the whole list, never a share of one stream', async () => {
  const list = JSON.stringify(Array.from({ length: 20 }, (_, i) => JSON.parse(post(`p${i}`))))
  // Each stream ends once six are open at once (whatever the machine's speed); later ones at once.
  const ends: Array<() => void> = []
  let holding = true
  upstream.behave((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write(list.slice(0, 5000))
    ends.push(() => res.end(list.slice(5000)))
    if (!holding) ends.shift()?.()
  })
  const before = upstream.requests.length
  const answers = Promise.all(Array.from({ length: 6 }, async () => await get(front.url, '/api/blog')))
  try {
    await pollUntil('six upstream streams open at once', () => ends.length === 6)
  } finally {
    holding = false
    for (const end of ends.splice(0)) end()
  }
  for (const response of await answers) {
    assert.equal(response.status, 200)
    assert.equal(response.text, list)
  }
  assert.equal(upstream.requests.length - before, 6, 'one upstream stream per client')
})

test('a streamed list that does not open an array is a 502', async () => {
  upstream.behave((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(`{"slug":"x","pad":"${'y'.repeat(10_000)}"}`)
  })
  assertProblem(await get(front.url, '/api/blog'), 'upstream-bad-response')
})

test('a streamed list cut off upstream is cut off for the client, never completed', async () => {
  upstream.behave((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write(`[${post('a')},${post('b')},${post('c')}`, () => req.socket.destroy())
  })
  await assert.rejects(async () => {
    const response = await request(`${front.url}/api/blog`)
    await response.body.text()
  })
})

test('CORS: any origin may read, preflights are answered, credentials never allowed', async () => {
  serveWithEtag(post('shared'))
  const simple = await get(front.url, '/api/blog/shared', { origin: 'https://reader.example' })
  assert.equal(simple.headers['access-control-allow-origin'], '*')
  assert.match(String(simple.headers['access-control-expose-headers']), /ETag/)
  const preflight = await get(front.url, '/api/blog/shared', {
    origin: 'https://reader.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match'
  }, 'OPTIONS')
  assert.equal(preflight.status, 204)
  assert.match(String(preflight.headers['access-control-allow-methods']), /GET/)
  assert.equal(preflight.headers['access-control-allow-credentials'], undefined)
})

test('CORS off: no CORS headers and OPTIONS is 405', async () => {
  const closed = await startFront(upstream.url, { corsOrigins: [] })
  try {
    serveWithEtag(post('private'))
    const response = await get(closed.url, '/api/blog/private', { origin: 'https://reader.example' })
    assert.equal(response.headers['access-control-allow-origin'], undefined)
    assertProblem(await get(closed.url, '/api/blog/private', {}, 'OPTIONS'), 'method-not-allowed')
  } finally {
    await closed.app.close()
  }
})
