// The hub against a model: subscribers join from any token (or none), stall, drain, leave, while
// changes are published and the log evicts; each one reading its own stream with the browser's
// rules ends holding exactly the current state, and a stalled one is never written to until it
// drains (its memory is what it had buffered, whatever the rate of changes).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import type { Change } from '../../src/sync/change.js'
import { createChangeHub, DEFAULT_HEARTBEAT_MS, type EventSink } from '../../src/sync/change-hub.js'
import { createChangeLog } from '../../src/sync/change-log.js'
import { createEventStreamParser } from '../../src/sync/sse-parser.js'
import { stateToken } from '../../src/sync/state-token.js'
import { createStateTracker } from '../../src/sync/state-tracker.js'
import { createManualTimers } from '../helpers/manual-timers.js'

/** A subscriber's socket: keeps what is written; when `full`, refuses more until drained. */
class FakeSink implements EventSink {
  written: Buffer[] = []
  full = false
  /** Writes after one was refused, before a drain: what back-pressure must prevent. */
  writesWhileFull = 0
  #refused = false
  ended = false
  destroyed = false
  #drains: Array<() => void> = []

  write (chunk: Buffer): boolean {
    if (this.full && this.#refused) this.writesWhileFull++
    if (this.full) this.#refused = true
    this.written.push(chunk)
    return !this.full
  }

  once (_event: 'drain', listener: () => void): this {
    this.#drains.push(listener)
    return this
  }

  drain (): void {
    this.full = false
    this.#refused = false
    for (const listener of this.#drains.splice(0)) listener()
  }

  end (): void { this.ended = true }
  destroy (): void { this.destroyed = true }
  text (): string { return Buffer.concat(this.written).toString('utf8') }
}

/** A client that reads its stream as a browser does and keeps a copy of the list. */
interface Client {
  sink: FakeSink
  close: () => void
  /** The state its copy is in, and the copy. */
  token: string | undefined
  copy: Set<string>
  read: number
}

type Step =
  | { kind: 'write', slug: string, remove: boolean }
  | { kind: 'join', from: 'none' | 'seen' | 'unknown', pick: number }
  | { kind: 'leave' | 'stall' | 'drain', pick: number }
  | { kind: 'beat' }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), slug: fc.constantFrom('a', 'b', 'c', 'd'), remove: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('join' as const), from: fc.constantFrom('none' as const, 'seen' as const, 'unknown' as const), pick: fc.nat() }) },
  fc.record({ kind: fc.constantFrom('leave' as const, 'stall' as const, 'drain' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('beat' as const) })
)

test('every subscriber, however it joins, stalls or lags, ends with exactly the current state', () => {
  fc.assert(fc.property(fc.array(stepArb, { maxLength: 60 }), fc.integer({ min: 2, max: 6 }), (steps, maxStates) => {
    const timers = createManualTimers()
    const hub = createChangeHub({ log: createChangeLog({ maxStates, maxBytes: 1 << 20 }), timers })
    const tracker = createStateTracker()
    const store = new Map<string, string>()
    const states = new Map<string, Set<string>>()
    let version = 0
    const observe = (): void => {
      const { token, change } = tracker.observe(new Map(store))
      states.set(token, new Set(store.keys()))
      if (change !== undefined) hub.publish(change)
      else if (hub.log.head !== token) hub.reset(token)
    }
    observe()
    const clients: Client[] = []
    const connected = (): Client[] => clients.filter((client) => !client.sink.destroyed && !client.sink.ended)

    function readNew (client: Client): void {
      const bytes = Buffer.concat(client.sink.written).subarray(client.read)
      client.read += bytes.length
      parserOf(client).push(bytes)
    }
    const parsers = new Map<Client, ReturnType<typeof createEventStreamParser>>()
    function parserOf (client: Client): ReturnType<typeof createEventStreamParser> {
      let parser = parsers.get(client)
      if (parser === undefined) {
        parser = createEventStreamParser((event) => {
          if (event.type === 'sync-expired') {
            // Starts again from the whole list, at the head the event names.
            client.copy = new Set(states.get(event.lastEventId))
            client.token = event.lastEventId
          } else if (event.data === undefined) {
            // A position: where a subscriber without a token joined, or the head it resumed at.
            if (client.token === undefined) client.copy = new Set(states.get(event.lastEventId))
            else assert.equal(event.lastEventId, client.token, 'a subscriber with a token is told only that it is at the head')
            client.token = event.lastEventId
          } else {
            const change = JSON.parse(event.data) as Change
            assert.equal(change.since, client.token, 'each event starts where the client is')
            assert.equal(event.lastEventId, change.until)
            for (const slug of change.deleted) client.copy.delete(slug)
            for (const slug of change.upserted) client.copy.add(slug)
            client.token = change.until
          }
        })
        parsers.set(client, parser)
      }
      return parser
    }

    for (const step of steps) {
      const live = connected()
      const picked = live[('pick' in step ? step.pick : 0) % Math.max(live.length, 1)]
      switch (step.kind) {
        case 'write':
          if (step.remove) store.delete(step.slug)
          else store.set(step.slug, `v${++version}`)
          observe()
          break
        case 'join': {
          const seen = [...states.keys()]
          const from = step.from === 'none' ? undefined : step.from === 'seen' ? seen[step.pick % seen.length] : stateToken(new Map([['never', 'seen']]))
          const sink = new FakeSink()
          const client: Client = { sink, close: () => {}, token: from, copy: new Set(from === undefined ? [] : states.get(from) ?? ['unknown']), read: 0 }
          client.close = hub.subscribe(sink, from).close
          clients.push(client)
          break
        }
        case 'leave':
          if (picked !== undefined) {
            picked.close()
            picked.sink.ended = true
          }
          break
        case 'stall': if (picked !== undefined) picked.sink.full = true; break
        case 'drain': if (picked !== undefined) picked.sink.drain(); break
        case 'beat': timers.advance(DEFAULT_HEARTBEAT_MS)
      }
      for (const client of clients) assert.equal(client.sink.writesWhileFull, 0, 'nothing is written to a stalled subscriber')
    }
    for (const client of connected()) client.sink.drain()
    const head = hub.log.head as string
    for (const client of clients) {
      readNew(client)
      if (client.sink.ended || client.sink.destroyed) continue
      assert.equal(client.token, head)
      assert.deepEqual([...client.copy].sort(), [...(states.get(head) as Set<string>)].sort())
    }
    assert.equal(hub.subscribers, connected().length)
  }), { numRuns: 1000 })
})

test('a subscriber stalled for four heartbeats is disconnected; the others keep their heartbeats', () => {
  const timers = createManualTimers()
  const active: boolean[] = []
  const hub = createChangeHub({ timers, onActiveChange: (value) => active.push(value) })
  hub.reset(stateToken(new Map()))
  const slow = new FakeSink()
  const fine = new FakeSink()
  hub.subscribe(slow)
  const fineSubscription = hub.subscribe(fine)
  slow.full = true
  timers.advance(DEFAULT_HEARTBEAT_MS)
  assert.equal(fine.text().split(': heartbeat\n\n').length - 1, 1)
  timers.advance(3 * DEFAULT_HEARTBEAT_MS)
  assert.equal(slow.destroyed, false, 'three beats stalled: still there')
  timers.advance(DEFAULT_HEARTBEAT_MS)
  assert.equal(slow.destroyed, true)
  assert.equal(hub.subscribers, 1)
  assert.equal(fine.text().split(': heartbeat\n\n').length - 1, 5)
  fineSubscription.close()
  assert.equal(timers.pending(), 0, 'no heartbeat without subscribers')
  assert.deepEqual(active, [true, false])
  const last = new FakeSink()
  hub.subscribe(last)
  hub.close()
  assert.equal(last.ended, true)
  assert.deepEqual(active, [true, false, true, false])
})

test('a subscriber that arrives before the first state waits for it', () => {
  const hub = createChangeHub({ timers: createManualTimers() })
  const token = stateToken(new Map())
  const fresh = new FakeSink()
  const resuming = new FakeSink()
  const atFirstState = new FakeSink()
  hub.subscribe(fresh)
  hub.subscribe(new FakeSink(), 'not a token')
  assert.equal(hub.waitingFrom, undefined, 'only a well-formed token is resumed from')
  hub.subscribe(resuming, stateToken(new Map([['a', '1']])))
  hub.subscribe(atFirstState, token)
  assert.equal(fresh.written.length + resuming.written.length + atFirstState.written.length, 0)
  assert.equal(hub.waitingFrom, stateToken(new Map([['a', '1']])), 'where a relay resumes upstream from')
  hub.reset(token)
  assert.equal(hub.waitingFrom, undefined)
  assert.equal(fresh.text(), `id: ${token}\n\n`)
  assert.equal(atFirstState.text(), `id: ${token}\n\n`, 'one that waited at what became the head is told it is there')
  assert.match(resuming.text(), new RegExp(`^id: ${token}\nevent: sync-expired\ndata: \\{"type":"urn:blog-read-api:problem:sync-expired","title":"Sync token expired","status":410,`))
  // A change that changes nothing reaches nobody.
  hub.publish({ since: token, until: token, upserted: [], deleted: [] })
  assert.equal(fresh.written.length, 1)
  // Resuming at the head: told only that it is there.
  const atHead = new FakeSink()
  hub.subscribe(atHead, token)
  assert.equal(atHead.text(), `id: ${token}\n\n`)
})
