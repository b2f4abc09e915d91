// The change stream over real HTTP on loopback: its framing and headers, heartbeats, resuming
// from Last-Event-ID or since, a client that stops reading, and what 1,000 idle subscribers cost
// a process that does nothing else.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import type { Change } from '../../src/sync/change.js'
import { DEFAULT_HEARTBEAT_MS } from '../../src/sync/change-hub.js'
import { resumeFrom } from '../../src/sync/event-stream.js'
import { createEventStreamParser, type ParsedEvent } from '../../src/sync/sse-parser.js'
import { startChangeSource } from '../helpers/change-source.js'
import { pollUntil } from '../helpers/poll.js'
import { openStreamClient } from '../helpers/sse-client.js'

const isChange = (event: ParsedEvent): boolean => event.type === 'message' && event.data !== undefined

test('a stream: its headers, an id naming where it joined, an event per change, a heartbeat comment every 15 s', { timeout: 30_000 }, async (t) => {
  const source = await startChangeSource(t)
  const head = source.hub.log.head as string
  const client = await openStreamClient(source.url)
  t.after(() => client.close())
  assert.equal(client.status, 200)
  assert.equal(client.headers['content-type'], 'text/event-stream')
  assert.equal(client.headers['cache-control'], 'no-store, no-transform')
  assert.equal(client.headers['x-accel-buffering'], 'no')
  assert.equal(client.headers['x-request-id'], 'r1')
  await client.waitFor((event) => event.lastEventId === head)
  const change = source.write((versions) => versions.set('hello-world', 'v1'))
  await client.waitFor(isChange)
  source.timers.advance(DEFAULT_HEARTBEAT_MS)
  await pollUntil('the heartbeat', () => client.raw().endsWith(': heartbeat\n\n'))
  assert.equal(client.raw(), `id: ${head}\n\nid: ${change.until}\ndata: {"since":"${head}","until":"${change.until}","upserted":["hello-world"],"deleted":[]}\n\n: heartbeat\n\n`)
  client.close()
  await pollUntil('the subscriber gone', () => source.hub.subscribers === 0)
})

test('resuming: Last-Event-ID (or since) gets the gap as one event; a token not held gets sync-expired, then live events', { timeout: 30_000 }, async (t) => {
  const source = await startChangeSource(t, { maxStates: 3 })
  const first = source.write((versions) => versions.set('a', 'v1'))
  source.write((versions) => versions.set('b', 'v1'))
  const third = source.write((versions) => { versions.delete('a'); versions.set('c', 'v1') })
  const resumed = await openStreamClient(source.url, { 'last-event-id': first.until })
  t.after(() => resumed.close())
  const gap = await resumed.waitFor(isChange)
  assert.equal(gap.lastEventId, third.until)
  assert.deepEqual(JSON.parse(gap.data as string), { since: first.until, until: third.until, upserted: ['b', 'c'], deleted: ['a'] })
  const bySince = await openStreamClient(`${source.url}?since=${first.until}`)
  t.after(() => bySince.close())
  assert.equal((await bySince.waitFor(isChange)).data, gap.data)
  const expired = await openStreamClient(`${source.url}?since=${first.until}`, { 'last-event-id': first.since })
  t.after(() => expired.close())
  const event = await expired.waitFor(() => true)
  assert.equal(event.type, 'sync-expired', 'Last-Event-ID wins over since, and that state fell out of the log')
  assert.equal(event.lastEventId, third.until)
  assert.equal(JSON.parse(event.data as string).status, 410)
  const next = source.write((versions) => versions.set('d', 'v1'))
  assert.equal((await expired.waitFor(isChange)).lastEventId, next.until, 'live events follow')
  assert.equal(resumeFrom(['a', 'b'], 'since'), 'since')
  assert.equal(resumeFrom('', 'since'), 'since')
})

test('a client that stops reading holds back only what its socket buffers, then catches up in one event', { timeout: 60_000 }, async (t) => {
  const source = await startChangeSource(t)
  const { port } = new URL(source.url)
  const socket = connect(Number(port), '127.0.0.1')
  t.after(() => socket.destroy())
  // HTTP/1.0: the body comes as it is written, without chunked framing, for the parser to read.
  socket.write('GET /changes HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n')
  await pollUntil('the subscriber', () => source.hub.subscribers === 1)
  socket.pause()
  const response = [...source.responses][0] as ServerResponse
  // Big changes (every post renamed) until the server's socket refuses more.
  let published = 0
  let largestFrame = 0
  let round = 0
  const writeRound = (): void => {
    round++
    const change = source.write((versions) => {
      versions.clear()
      for (let i = 0; i < 2000; i++) versions.set(`round-${round}-post-with-a-longer-slug-${i}`, 'v1')
    })
    largestFrame = Math.max(largestFrame, JSON.stringify(change).length + 200)
    published++
  }
  while (!response.writableNeedDrain) {
    writeRound()
    if (published > 2000) assert.fail('the socket never filled')
  }
  const buffered = response.writableLength
  for (let i = 0; i < 50; i++) writeRound()
  assert.equal(response.writableLength, buffered, 'nothing more is buffered for it while it does not read')
  assert.ok(buffered <= response.writableHighWaterMark + largestFrame, `${buffered} bytes buffered`)
  // It reads again: it gets what it had, then one event up to the head.
  const events: ParsedEvent[] = []
  const parser = createEventStreamParser((event) => events.push(event))
  const head = source.hub.log.head as string
  let received = Buffer.alloc(0)
  let inBody = false
  socket.on('data', (chunk: Buffer) => {
    if (inBody) return parser.push(chunk)
    received = Buffer.concat([received, chunk])
    const end = received.indexOf('\r\n\r\n')
    if (end === -1) return
    inBody = true
    parser.push(received.subarray(end + 4))
  })
  socket.resume()
  await pollUntil('the head', () => events.at(-1)?.lastEventId === head, { withinMs: 30_000 })
  const copy = new Set<string>()
  let at = events[0]?.lastEventId
  for (const event of events.slice(1)) {
    const change = JSON.parse(event.data as string) as Change
    assert.equal(change.since, at)
    for (const slug of change.deleted) copy.delete(slug)
    for (const slug of change.upserted) copy.add(slug)
    at = change.until
  }
  assert.deepEqual([...copy].sort(), source.slugs())
  t.diagnostic(`${published} changes of 2,000 renamed posts; ${buffered} bytes buffered for the stalled client; ${events.length - 1} events received`)
  assert.ok(events.length - 1 < published, `${events.length - 1} events for ${published} changes`)
})

test('1,000 idle subscribers: what they cost a process, and each gets every change and heartbeat', { timeout: 120_000 }, async (t) => {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('fixtures/hub-server.ts', import.meta.url))], {
    env: { ...process.env, HEARTBEAT_MS: '2000' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.after(() => child.kill('SIGTERM'))
  const [line] = await once(child.stdout, 'data') as [Buffer]
  const port = Number(/listening (\d+)/.exec(line.toString())?.[1])
  const base = `http://127.0.0.1:${port}`
  const memory = async (): Promise<{ heapUsed: number, rss: number, external: number, subscribers: number }> =>
    await (await request(`${base}/memory`)).body.json() as { heapUsed: number, rss: number, external: number, subscribers: number }
  // Warm the paths up with one subscriber, then measure without any.
  const warm = await openStreamClient(`${base}/changes`)
  await warm.waitFor(() => true)
  warm.close()
  await pollUntil('the warm-up subscriber gone', async () => (await memory()).subscribers === 0)
  const before = await memory()
  const count = 1000
  const received = Array.from({ length: count }, () => '')
  const sockets = Array.from({ length: count }, (_, i) => {
    const socket = connect(port, '127.0.0.1')
    socket.setEncoding('utf8')
    socket.on('data', (text: string) => { received[i] += text })
    socket.write('GET /changes HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
    return socket
  })
  t.after(() => { for (const socket of sockets) socket.destroy() })
  await pollUntil('1,000 subscribers', async () => (await memory()).subscribers === count, { withinMs: 60_000, everyMs: 200 })
  const after = await memory()
  const perSubscriber = (key: 'heapUsed' | 'rss' | 'external'): number => (after[key] - before[key]) / count
  t.diagnostic(`per idle subscriber: heap ${(perSubscriber('heapUsed') / 1024).toFixed(1)} KiB, external ${(perSubscriber('external') / 1024).toFixed(1)} KiB, RSS ${(perSubscriber('rss') / 1024).toFixed(1)} KiB; total heap ${((after.heapUsed - before.heapUsed) / 2 ** 20).toFixed(1)} MiB`)
  assert.ok(perSubscriber('heapUsed') < 32 * 1024, `heap per subscriber ${perSubscriber('heapUsed')} bytes`)
  const { until } = await (await request(`${base}/publish`, { method: 'POST' })).body.json() as { until: string }
  await pollUntil('every subscriber got the change', () => received.every((text) => text.includes(`id: ${until}\ndata: `)), { withinMs: 30_000, everyMs: 100 })
  await pollUntil('every subscriber got a heartbeat', () => received.every((text) => text.includes(': heartbeat\n\n')), { withinMs: 30_000, everyMs: 100 })
})
