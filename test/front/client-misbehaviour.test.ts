// Clients that misbehave: aborts mid-response, slow headers (slowloris), and crowds of
// idle keep-alive connections. Each time the front must keep serving other clients, and let go
// of every socket. Loopback only; every socket and server is closed at the end.
import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { logSink } from '../helpers/log-sink.js'
import { pollUntil } from '../helpers/poll.js'
import { rawExchange, RawKeepAliveClient } from '../helpers/raw-http.js'
import { SETTINGS } from '../../src/settings.js'
import { buildTestFront, listen, startFront, type RunningApp } from '../helpers/tiers.js'

// ~2 MB, below the front's streaming threshold: it is validated, held and sent whole.
const LIST = JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ slug: `post-${i}`, content: 'x'.repeat(2000) })))

/** Log lines at error level or above: a misbehaving client is not a server error. */
const { logger, lines: errorLogs } = logSink('error')

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    if (req.url === '/api/posts') return json(res, 200, LIST)
    json(res, 200, { slug: req.url?.slice('/api/post/'.length) })
  })
  front = await startFront(upstream.url, { logger })
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

const connections = async (app: FastifyInstance): Promise<number> =>
  await new Promise((resolve, reject) => app.server.getConnections((err, count) => err === null ? resolve(count) : reject(err)))

/** A well-behaved client, on a connection of its own: answered 200, and quickly. */
async function servedQuickly (port: number, path: string, withinMs: number): Promise<void> {
  const start = Date.now()
  const [response] = await rawExchange(port, Buffer.from(path), withinMs + 1000)
  assert.equal(response?.status, 200, `${path} while clients misbehave`)
  assert.ok(Date.now() - start < withinMs, `${path} answered in ${Date.now() - start} ms, over ${withinMs} ms`)
}

/** Asks for `path`, then leaves after the first chunk of the answer: with a FIN, or a reset. */
async function abortAfterFirstChunk (port: number, path: string, how: 'close' | 'reset'): Promise<number> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
    let received = 0
    socket.setTimeout(5000, () => socket.destroy(new Error('no first chunk within 5 s')))
    socket.once('data', (chunk: Buffer) => {
      received = chunk.length
      if (how === 'reset') socket.resetAndDestroy()
      else socket.destroy()
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
  })
}

test('50 clients that abort a 2 MB list mid-response: others are still served, no socket is left open', { timeout: 15_000 }, async () => {
  const received = await Promise.all(Array.from({ length: 50 }, async (_, i) => await abortAfterFirstChunk(front.port, '/api/blog', i % 2 === 0 ? 'close' : 'reset')))
  assert.ok(received.every((bytes) => bytes > 0 && bytes < LIST.length), 'each client left in the middle of the answer')

  for (let i = 0; i < 5; i++) await servedQuickly(front.port, `/api/blog/after-abort-${i}`, 1000)
  const [whole] = await rawExchange(front.port, Buffer.from('/api/blog'))
  assert.equal(whole?.status, 200)
  assert.equal(whole?.body.toString('utf8'), LIST, 'the list is still relayed whole')
  await pollUntil('every socket released by the front', async () => await connections(front.app) === 0)
  assert.deepEqual(errorLogs, [])
})

/** Sends a request line, then one header line every `everyMs`, never the blank line that ends them. */
function slowHeaders (port: number, everyMs: number): { socket: Socket, closed: Promise<{ afterMs: number, answer: string }> } {
  const start = Date.now()
  const socket = connect(port, '127.0.0.1', () => socket.write('GET /api/blog HTTP/1.1\r\nHost: 127.0.0.1\r\n'))
  let answer = ''
  let n = 0
  const drip = setInterval(() => socket.write(`X-Drip-${n++}: y\r\n`), everyMs)
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
  socket.on('error', () => {}) // a write racing the server's close
  const closed = new Promise<{ afterMs: number, answer: string }>((resolve) => socket.on('close', () => {
    clearInterval(drip)
    resolve({ afterMs: Date.now() - start, answer })
  }))
  return { socket, closed }
}

/** What a slow-header client may be told as it is cut off: nothing, or a 4xx problem. */
function assertCutOff ({ answer }: { answer: string }): void {
  if (answer === '') return
  assert.match(answer, /^HTTP\/1\.1 4\d\d /)
  assert.match(answer, /\r\ncontent-type: application\/problem\+json/i)
}

test('slowloris: 100 sockets dripping headers are cut by the header time-out while others are served', { timeout: 15_000 }, async () => {
  const app = buildTestFront(upstream.url, { logger })
  // The service's 10 s header time-out, shortened to keep the test short. Node enforces both
  // time-outs only when it checks its connections (every 30 s by default, read at listen).
  app.server.headersTimeout = 1000
  app.server.requestTimeout = 2000
  ;(app.server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 100
  const short = await listen(app)
  const slow = Array.from({ length: 100 }, () => slowHeaders(short.port, 100))
  try {
    await pollUntil('the slow clients connected', async () => await connections(short.app) === slow.length)
    for (let i = 0; i < 10; i++) await servedQuickly(short.port, `/api/blog/during-slowloris-${i}`, 500)
    const cut = await Promise.all(slow.map(async ({ closed }) => await closed))
    for (const outcome of cut) {
      assertCutOff(outcome)
      assert.ok(outcome.afterMs >= 900 && outcome.afterMs <= 2000, `slow client cut after ${outcome.afterMs} ms, not about 1 s`)
    }
    await servedQuickly(short.port, '/api/blog/after-slowloris', 500)
    await pollUntil('every socket released by the front', async () => await connections(short.app) === 0)
  } finally {
    for (const { socket } of slow) socket.destroy()
    await short.app.close()
  }
  assert.deepEqual(errorLogs, [])
})

test('the service\'s own front cuts a slow-header client as the shortened one above: its server carries the header time-out and checks connections every second', async () => {
  // Waiting out the real 10 s would only time Node's timer; what is ours is the configuration,
  // and the slowloris test shows what that configuration does, shortened.
  const own = await startFront(upstream.url, { logger })
  try {
    const server = own.app.server as Server & { connectionsCheckingInterval: number }
    assert.equal(server.headersTimeout, Number(SETTINGS.HEADERS_TIMEOUT_MS.default))
    assert.equal(server.connectionsCheckingInterval, 1000)
    assert.ok(server.requestTimeout > server.headersTimeout, 'the request time-out must not cut a head before the header time-out does')
  } finally {
    await own.app.close()
  }
})

test('500 idle keep-alive connections do not keep a new client from being served', { timeout: 15_000 }, async () => {
  const idle: RawKeepAliveClient[] = []
  try {
    // Opened in batches, each after one answered request, then left idle on the server.
    for (let batch = 0; batch < 5; batch++) {
      const clients = Array.from({ length: 100 }, () => new RawKeepAliveClient(front.port))
      idle.push(...clients)
      const answers = await Promise.all(clients.map(async (client, i) => await client.get(Buffer.from(`/api/blog/idle-${batch}-${i}`))))
      assert.ok(answers.every((answer) => answer.status === 200))
    }
    assert.ok(await connections(front.app) >= 500, 'the idle connections are held open')
    for (let i = 0; i < 10; i++) await servedQuickly(front.port, `/api/blog/new-client-${i}`, 500)
    // An idle connection is still usable afterwards.
    assert.equal((await idle[0]?.get(Buffer.from('/api/blog/idle-again')))?.status, 200)
  } finally {
    for (const client of idle) client.close()
  }
  await pollUntil('every socket released by the front', async () => await connections(front.app) === 0)
  assert.deepEqual(errorLogs, [])
})
