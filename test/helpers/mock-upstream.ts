// Upstream clients over undici's MockAgent, for tests of the client's own logic (no sockets):
// every upstream is an origin of the one agent, and the retries' fresh connections are agents too.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { MockAgent, type Dispatcher } from 'undici'
import { createUpstreamClient, type PooledUpstreamClient } from '../../src/front/upstream/client.js'
import { ProblemError, type ProblemKind } from '../../src/contract/problems.js'
import { testConfig } from './config.js'

export const ORIGIN = 'http://upstream.test'

export function mockAgent (): MockAgent {
  const agent = new MockAgent()
  agent.disableNetConnect()
  return agent
}

export interface MockClientOptions {
  /** Stand for the new connections of retries, in order (none unless given). */
  fresh?: Dispatcher[]
  /** Base URLs, all reached through the one agent: one upstream at ORIGIN unless given. */
  bases?: string[]
  /** 0 (never take an upstream out of rotation) unless given. */
  ejectFailures?: number
  probeIntervalMs?: number
  timeoutMs?: number
}

/** A client over `agent` with the settings table's defaults but those given; closed after the test. */
export function clientOver (t: TestContext, agent: Dispatcher, { fresh = [], bases = [`${ORIGIN}/`], ejectFailures = 0, probeIntervalMs = 10, timeoutMs = 2000 }: MockClientOptions = {}): { client: PooledUpstreamClient, freshUsed: () => number } {
  const config = testConfig({ UPSTREAM_TIMEOUT_MS: String(timeoutMs) })
  let used = 0
  const client = createUpstreamClient({
    upstreams: bases.map((base) => ({
      apiUrl: new URL(base),
      dispatcher: agent,
      connectFresh: () => {
        const next = fresh[used++]
        if (next === undefined) throw new Error('no fresh connection expected')
        // A MockAgent cannot be destroyed ("not implemented"); a real connection can.
        next.destroy = (async () => { await next.close() }) as Dispatcher['destroy']
        return next
      }
    })),
    timeouts: config.upstreamTimeouts,
    health: { ejectFailures, probeIntervalMs }
  })
  t.after(() => client.close())
  return { client, freshUsed: () => used }
}

export const call = { requestId: 'req-1', maxBytes: 1000 }

/** An error as undici or Node raise it, with its code. */
export const coded = (code: string): Error => Object.assign(new Error(code), { code })

export async function rejectsWith (promise: Promise<unknown>, kind: ProblemKind): Promise<ProblemError> {
  const err = await promise.then(() => assert.fail(`expected ${kind}`), (e: unknown) => e)
  assert.ok(err instanceof ProblemError, `not a problem: ${String(err)}`)
  assert.equal(err.kind, kind)
  return err
}
