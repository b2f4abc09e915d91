// A post API's change stream in miniature, for tests: a tracker over a map of posts feeding a
// hub, served by a node:http server on loopback with manual timers (heartbeats on demand).
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { Change } from '../../src/sync/change.js'
import { createChangeHub, type ChangeHub } from '../../src/sync/change-hub.js'
import { createChangeLog } from '../../src/sync/change-log.js'
import { openEventStream, resumeFrom } from '../../src/sync/event-stream.js'
import { createStateTracker } from '../../src/sync/state-tracker.js'
import { createManualTimers, type ManualTimers } from './manual-timers.js'

export interface ChangeSource {
  hub: ChangeHub
  timers: ManualTimers
  url: string
  /** The responses streaming now (to look at their buffers). */
  responses: Set<ServerResponse>
  /** Writes posts and publishes what changed; returns the change. */
  write: (edit: (versions: Map<string, string>) => void) => Change
  /** The slugs of the current state. */
  slugs: () => string[]
  /** Cuts every stream (a process that died, a network fault). */
  disconnect: () => void
}

/** A post API's stream in miniature: a tracker over a map of posts, a hub, a node:http server. */
export async function startChangeSource (t: TestContext, { maxStates = 1000 } = {}): Promise<ChangeSource> {
  const timers = createManualTimers()
  const hub = createChangeHub({ timers, log: createChangeLog({ maxStates, maxBytes: 64 << 20 }) })
  const tracker = createStateTracker()
  const versions = new Map<string, string>()
  hub.reset(tracker.observe(new Map(versions)).token)
  const responses = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    responses.add(res)
    res.once('close', () => responses.delete(res))
    openEventStream(res, hub, { from: resumeFrom(req.headers['last-event-id'], url.searchParams.get('since') ?? undefined), headers: { 'x-request-id': 'r1' } })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => {
    hub.close()
    server.closeAllConnections()
    server.close()
  })
  return {
    hub,
    timers,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/changes`,
    responses,
    write (edit) {
      edit(versions)
      const { change } = tracker.observe(new Map(versions))
      assert.ok(change !== undefined, 'the edit changed something')
      hub.publish(change)
      return change
    },
    slugs: () => [...versions.keys()].sort(),
    disconnect: () => { for (const res of responses) res.destroy() }
  }
}
