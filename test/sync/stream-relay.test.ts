// The front's relay over real HTTP: one upstream stream serves any number of the front's
// subscribers; after a failover to another post API that saw the same states they go on without
// a gap; one that never saw them makes every subscriber start again (sync-expired); a silent or
// garbled upstream is dropped and followed again.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test, type TestContext } from 'node:test'
import { request } from 'undici'
import type { Change } from '../../src/sync/change.js'
import { createChangeHub, type ChangeHub } from '../../src/sync/change-hub.js'
import { openEventStream, resumeFrom } from '../../src/sync/event-stream.js'
import type { ParsedEvent } from '../../src/sync/sse-parser.js'
import { BadUpstreamEventError, startRelay, type Relay, type RelayOptions } from '../../src/sync/stream-relay.js'
import type { Timers } from '../../src/lib/timers.js'
import { startChangeSource, type ChangeSource } from '../helpers/change-source.js'
import { createManualTimers } from '../helpers/manual-timers.js'
import { pollUntil } from '../helpers/poll.js'
import { openStreamClient, type StreamClient } from '../helpers/sse-client.js'

async function listen (t: TestContext, server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** How the front opens its upstream stream: GET with Last-Event-ID, the body as it comes. */
function connectTo (upstreamUrl: () => string, connections: { count: number }): RelayOptions['connect'] {
  return async (lastEventId, signal) => {
    connections.count++
    const response = await request(upstreamUrl(), { headers: { accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) }, signal })
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new Error(`upstream answered ${response.statusCode}`)
    }
    return response.body
  }
}

interface Front {
  hub: ChangeHub
  url: string
  connections: { count: number }
  errors: unknown[]
}

/** A front: a hub whose upstream stream is open exactly while it has subscribers. */
async function startFront (t: TestContext, upstreamUrl: () => string, timers?: Timers): Promise<Front> {
  const connections = { count: 0 }
  const errors: unknown[] = []
  let relay: Relay | undefined
  const hub: ChangeHub = createChangeHub({
    onActiveChange (active) {
      relay?.close()
      relay = active ? startRelay({ hub, connect: connectTo(upstreamUrl, connections), minRetryMs: 10, maxRetryMs: 50, onError: (err) => errors.push(err), ...(timers === undefined ? {} : { timers }) }) : undefined
    }
  })
  t.after(() => hub.close())
  const url = await listen(t, createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams
    openEventStream(res, hub, { from: resumeFrom(req.headers['last-event-id'], query.get('since') ?? undefined) })
  }))
  return { hub, url: `${url}/api/changes`, connections, errors }
}

/** A client's copy, kept by applying each event in order. */
function follow (client: StreamClient): { copy: () => string[], token: () => string | undefined } {
  let copy = new Set<string>()
  let token: string | undefined
  let applied = 0
  const catchUp = (): void => {
    for (const event of client.events.slice(applied)) {
      if (event.type === 'sync-expired') {
        copy = new Set(['start-again'])
        token = event.lastEventId
      } else if (event.data === undefined) token = event.lastEventId
      else {
        const change = JSON.parse(event.data) as Change
        assert.equal(change.since, token, 'no gap between events')
        for (const slug of change.deleted) copy.delete(slug)
        for (const slug of change.upserted) copy.add(slug)
        token = change.until
      }
    }
    applied = client.events.length
  }
  return { copy: () => { catchUp(); return [...copy].sort() }, token: () => { catchUp(); return token } }
}

const at = (token: string) => (event: ParsedEvent): boolean => event.lastEventId === token

test('one upstream stream serves 50 subscribers; a failover to a post API that saw the same states leaves no gap; one that did not makes them start again', { timeout: 60_000 }, async (t) => {
  const first = await startChangeSource(t)
  const second = await startChangeSource(t)
  const fresh = await startChangeSource(t)
  let upstream: ChangeSource = first
  const front = await startFront(t, () => upstream.url)
  // Two post API processes over the same posts: the same edits, the same tokens.
  const write = (edit: (versions: Map<string, string>) => void): Change => {
    second.write(edit)
    return first.write(edit)
  }
  const clients = await Promise.all(Array.from({ length: 50 }, async () => await openStreamClient(front.url)))
  t.after(() => { for (const client of clients) client.close() })
  const copies = clients.map(follow)
  await pollUntil('the front follows its upstream', () => front.hub.log.head === first.hub.log.head)
  assert.equal(first.hub.subscribers, 1, 'one upstream stream for 50 subscribers')
  let change = write((versions) => versions.set('a', 'v1'))
  await Promise.all(clients.map(async (client) => await client.waitFor(at(change.until))))
  // The first post API goes away; the front resumes on the second from the token it holds.
  upstream = second
  first.disconnect()
  change = write((versions) => { versions.set('b', 'v1'); versions.set('a', 'v2') })
  await Promise.all(clients.map(async (client) => await client.waitFor(at(change.until))))
  change = write((versions) => versions.delete('a'))
  await Promise.all(clients.map(async (client) => await client.waitFor(at(change.until))))
  for (const copy of copies) assert.deepEqual(copy.copy(), second.slugs())
  assert.equal(second.hub.subscribers, 1)
  assert.equal(front.connections.count, 2)
  // A post API that never saw these states: every subscriber is told to start again.
  fresh.write((versions) => versions.set('z', 'v1'))
  upstream = fresh
  second.disconnect()
  const freshHead = fresh.hub.log.head as string
  await Promise.all(clients.map(async (client) => await client.waitFor((event) => event.type === 'sync-expired' && event.lastEventId === freshHead)))
  for (const copy of copies) assert.equal(copy.token(), freshHead)
  // The last subscriber gone, the front lets its upstream stream go.
  for (const client of clients) client.close()
  await pollUntil('the upstream stream closed', () => fresh.hub.subscribers === 0)
})

test('a silent upstream is dropped after the idle time and followed again', { timeout: 30_000 }, async (t) => {
  const silent = await listen(t, createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders() }))
  const timers = createManualTimers()
  const front = await startFront(t, () => silent, timers)
  const client = await openStreamClient(front.url)
  t.after(() => client.close())
  await pollUntil('connected', () => front.connections.count === 1)
  timers.advance(45_000)
  await pollUntil('the silence noticed', () => front.errors.length === 1)
  assert.match(String(front.errors[0]), /silent for 45000 ms/)
  assert.ok(timers.next(), 'a wait before the next attempt')
  await pollUntil('followed again', () => front.connections.count === 2)
})

test('an upstream sending something other than changes is dropped; its good events before that were kept', { timeout: 30_000 }, async (t) => {
  const source = await startChangeSource(t)
  const change = source.write((versions) => versions.set('a', 'v1'))
  const bodies = [
    `id: ${change.since}\n\n${'data: not json'}\n\n`,
    `id: ${change.since}\n\nid: ${change.until}\ndata: ${JSON.stringify({ since: change.since, until: change.until, upserted: ['a'], deleted: [] })}\n\nevent: surprise\ndata: {}\n\n`,
    `id: ${change.since}\n\nid: other\ndata: ${JSON.stringify({ since: change.since, until: change.until, upserted: ['a'], deleted: [] })}\n\n`,
    'event: sync-expired\ndata: {}\n\n'
  ]
  let served = 0
  const garbled = await listen(t, createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write(bodies[served++ % bodies.length])
  }))
  const front = await startFront(t, () => garbled)
  const client = await openStreamClient(front.url)
  t.after(() => client.close())
  await pollUntil('every garbled stream dropped', () => front.errors.length >= 4)
  assert.deepEqual(front.errors.slice(0, 4).map((err) => err instanceof BadUpstreamEventError), [true, true, true, true])
  assert.match(String(front.errors[1]), /an event of type surprise/)
  await client.waitFor(at(change.until))
})
