// The keep-alive race: an upstream closes an idle keep-alive socket
// without announcing when (no `Keep-Alive: timeout=` hint, no `Connection: close`), just as the
// front's pool reuses it for the next request. A GET broken that way, before any answer, is
// retried once on a fresh connection, so clients never see it.
// On loopback, a close timed against a client's request crosses it only rarely, so this upstream
// makes the race happen every time: it reads the request on the reused socket and closes it
// without answering, exactly what the client sees when its request meets the upstream's close.
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { test } from 'node:test'
import { get } from '../helpers/http.js'
import { startFront } from '../helpers/tiers.js'

const POST = { slug: 'hello-world', title: 'Hello' }

/** A raw upstream that keeps sockets alive without a hint, and closes each one as its second request arrives. */
async function startRacingUpstream (): Promise<{ port: number, stats: { connections: number, requests: number }, close: () => Promise<void> }> {
  const stats = { connections: 0, requests: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    stats.connections++
    sockets.add(socket)
    let buffer = ''
    let served = 0
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1')
      for (let end = buffer.indexOf('\r\n\r\n'); end !== -1; end = buffer.indexOf('\r\n\r\n')) {
        const path = buffer.slice(0, end).split(' ')[1] ?? ''
        buffer = buffer.slice(end + 4)
        stats.requests++
        if (++served === 2) {
          // The race: the reused socket closes as the request reaches it.
          socket.end()
          return
        }
        const body = JSON.stringify({ ...POST, slug: path.split('/').pop() })
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      }
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

test('a reused socket closed just as the request arrives: retried on a fresh connection, 200', async () => {
  const raw = await startRacingUpstream()
  const racing = await startFront(new URL(`http://127.0.0.1:${raw.port}`))
  try {
    for (let i = 1; i <= 2; i++) assert.equal((await get(racing.url, '/api/blog/hello-world')).status, 200, `request ${i}`)
    // Request 1 on connection 1; request 2 reused it, met the close, and was sent again on a
    // fresh connection 2: three upstream requests, two connections, both answers 200.
    assert.deepEqual({ ...raw.stats }, { connections: 2, requests: 3 })
  } finally {
    await racing.app.close()
    await raw.close()
  }
})
