// The keep-alive race (issue 4, RELIABILITY row 12): an upstream that closes idle keep-alive
// sockets without announcing when (no `Keep-Alive: timeout=` hint), so the front's pool may reuse a
// socket just as it closes. A GET broken that way, before any answer, is retried once on a fresh
// connection, so clients never see it. A raw `net` upstream, to control exactly when it closes.
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'node:test'
import { get } from '../helpers/http.js'
import { startFront } from '../helpers/tiers.js'

const POST = { slug: 'hello-world', title: 'Hello' }

/** A raw upstream that keeps connections alive without a Keep-Alive hint and closes them (FIN) after `idleMs`. */
async function startIdleClosingUpstream (idleMs: number, closeOnSecondRequest = false): Promise<{ port: number, stats: { connections: number, requests: number, raced: number }, close: () => Promise<void> }> {
  const stats = { connections: 0, requests: 0, raced: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    stats.connections++
    sockets.add(socket)
    let buffer = ''
    let closing = false
    let served = 0
    let timer: NodeJS.Timeout | undefined
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      sockets.delete(socket)
    })
    socket.on('data', (chunk: Buffer) => {
      // A request that arrives after we closed our side: the race happened on this socket.
      if (closing) {
        stats.raced++
        socket.destroy()
        return
      }
      clearTimeout(timer)
      buffer += chunk.toString('latin1')
      for (let end = buffer.indexOf('\r\n\r\n'); end !== -1; end = buffer.indexOf('\r\n\r\n')) {
        const path = buffer.slice(0, end).split(' ')[1] ?? ''
        buffer = buffer.slice(end + 4)
        stats.requests++
        if (closeOnSecondRequest && ++served === 2) {
          // The deterministic form of the race: the close meets a request on a reused socket.
          closing = true
          socket.end()
          return
        }
        const body = JSON.stringify({ ...POST, slug: path.split('/').pop() })
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`)
      }
      timer = setTimeout(() => {
        closing = true
        socket.end()
      }, idleMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    stats,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

// RELIABILITY row 12 as a timed run. On loopback the exact race (the close crossing a request in
// flight) is rare even at ±20 ms, so this run mostly proves that idle closes without a hint cost
// nothing; the next test forces the race itself, and is the one that fails without the retry.
test('an upstream closing idle sockets after 500 ms, asked every 500 ± 20 ms for 5 s: 0 non-2xx', { timeout: 15_000 }, async (t) => {
  const raw = await startIdleClosingUpstream(500)
  const racing = await startFront(new URL(`http://127.0.0.1:${raw.port}`))
  try {
    const statuses: number[] = []
    // The jitter is spread over ±20 ms rather than drawn at random, so that every run has requests
    // landing just before, at and just after the upstream's close.
    const jitter = [20, -20, 10, -10, 5, -5, 1, -1, 0, 15]
    let sentAt = performance.now()
    for (const offset of jitter) {
      statuses.push((await get(racing.url, '/api/blog/hello-world')).status)
      sentAt += 500 + offset
      await sleep(Math.max(0, sentAt - performance.now()))
    }
    statuses.push((await get(racing.url, '/api/blog/hello-world')).status)
    assert.deepEqual(statuses.filter((s) => s !== 200), [])
    // The upstream did close idle sockets under the front: at least after the +20, +10 and +15 ms waits.
    assert.ok(raw.stats.connections >= 4, `only ${raw.stats.connections} connections: the idle closes did not happen`)
    t.diagnostic(`${raw.stats.requests} upstream requests on ${raw.stats.connections} connections, ${raw.stats.raced} met a closing socket`)
  } finally {
    await racing.app.close()
    await raw.close()
  }
})

test('a reused socket closed just as the request arrives: retried on a fresh connection, 200', async () => {
  const raw = await startIdleClosingUpstream(60_000, true)
  const racing = await startFront(new URL(`http://127.0.0.1:${raw.port}`))
  try {
    assert.equal((await get(racing.url, '/api/blog/hello-world')).status, 200)
    assert.equal((await get(racing.url, '/api/blog/hello-world')).status, 200)
    assert.deepEqual({ ...raw.stats }, { connections: 2, requests: 3, raced: 0 })
  } finally {
    await racing.app.close()
    await raw.close()
  }
})
