// Limits on what the front reads: an upstream post
// body is read up to 1 MiB (then 502, and the upstream is cut off), and a request body is refused
// with 413 before it is read, since these routes take none.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startFakeUpstream, type FakeUpstream, type UpstreamBehaviour } from '../helpers/fake-upstream.js'
import { gc } from '../helpers/gc.js'
import { get } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { asTestResponse, rawRequest } from '../helpers/raw-http.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream()
  front = await startFront(upstream.url, { timeoutMs: 2000 })
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

describe('upstream body size bound (1 MiB per post)', () => {
  const ZEROS = Buffer.alloc(64 * 1024)
  const MIB = 1024 * 1024
  const FIFTY_MIB = 50 * MIB

  /** Streams zeros (chunked, or with a 50 MiB Content-Length) until 50 MiB or until the front hangs up. */
  function streamZeros (sent: { bytes: number, closed: boolean }, declare: boolean): UpstreamBehaviour {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...(declare ? { 'content-length': FIFTY_MIB } : {}) })
      res.on('close', () => { sent.closed = true })
      const pump = (): void => {
        while (!res.destroyed && sent.bytes < FIFTY_MIB) {
          sent.bytes += ZEROS.length
          if (!res.write(ZEROS)) {
            res.once('drain', pump)
            return
          }
        }
        if (!res.destroyed) res.end()
      }
      pump()
    }
  }

  for (const [name, declare] of [['an endless chunked stream of zeros', false], ['50 MiB with its Content-Length', true]] as const) {
    test(`${name}: 502 once the limit is crossed, the upstream is cut off, memory bounded by the limit`, async (t) => {
      const rises: Array<{ buffers: number, rss: number }> = []
      for (let run = 0; run < 4; run++) {
        const sent = { bytes: 0, closed: false }
        upstream.behave(streamZeros(sent, declare))
        // Garbage from earlier work would hide or inflate the rise: start from a collected heap.
        gc()
        const before = process.memoryUsage()
        const peak = { buffers: before.arrayBuffers, rss: before.rss }
        const sampler = setInterval(() => {
          const now = process.memoryUsage()
          peak.buffers = Math.max(peak.buffers, now.arrayBuffers)
          peak.rss = Math.max(peak.rss, now.rss)
        }, 1)
        const response = await get(front.url, '/api/blog/hello-world')
        clearInterval(sampler)
        assertProblem(response, 'upstream-bad-response')
        await pollUntil('the front hanging up on the upstream', () => sent.closed)
        // Loopback socket buffers hold a few MiB; without the bound the front would read all 50.
        assert.ok(sent.bytes < 16 * MIB, `the upstream wrote ${sent.bytes} bytes`)
        rises.push({ buffers: peak.buffers - before.arrayBuffers, rss: peak.rss - before.rss })
      }
      t.diagnostic(`rises (MiB, buffers/RSS): ${rises.map((r) => `${(r.buffers / MIB).toFixed(1)}/${(r.rss / MIB).toFixed(1)}`).join(', ')}`)
      // The first run warms up (JIT, buffer pools, heap growth); the others show the steady cost.
      const steady = rises.slice(1)
      // Buffer memory is the body held while counting it, plus the socket's read buffers in flight:
      // measured 2.0–2.1 MiB at peak for the 1 MiB limit (about twice), and never near the 50 MiB
      // sent. The bound is wide (GC timing moves the peak); RSS, which V8's heap sizing moves as
      // much as the body does, is only reported.
      assert.ok(Math.max(...steady.map((r) => r.buffers)) < 8 * MIB, 'buffers held stay far below the 50 MiB sent')
    })
  }
})

describe('request bodies are refused before they are read', () => {
  for (const [name, bytes] of [
    ['Content-Length: 5', 'GET /api/blog/hello-world HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello'],
    ['a chunked body without Expect, never finished', 'GET /api/blog HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n']
  ] as const) {
    test(`${name}: 413 body-not-allowed, Connection: close, upstream not called`, async () => {
      const hits = upstream.requests.length
      const response = asTestResponse(await rawRequest(front.port, bytes, 3000))
      assertProblem(response, 'body-not-allowed')
      assert.equal(response.headers.connection, 'close')
      assert.equal(upstream.requests.length, hits)
    })
  }
})
