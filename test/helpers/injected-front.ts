// A front over a fake upstream, for route cases through app.inject() (no socket behaviour under
// test): the test file's before starts both, its after closes both.
import { after, before } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { startFakeUpstream, type FakeUpstream, type UpstreamBehaviour } from './fake-upstream.js'
import { fromInject, type TestResponse } from './http.js'
import { buildTestFront, type FrontTestOptions } from './tiers.js'

export interface InjectedFront {
  /** The fake upstream the front calls (once the file's before has run). */
  upstream: FakeUpstream
  /** The front, ready and not listening. */
  app: FastifyInstance
  /** A GET to the front, through app.inject(). */
  get: (url: string, headers?: Record<string, string>) => Promise<TestResponse>
}

/**
 * Declares, in the calling file, the hooks that start and close a front over a fake upstream
 * answering with `behaviour`, built with the options `options` makes (in the file's before).
 */
export function useInjectedFront (behaviour?: UpstreamBehaviour, options: () => FrontTestOptions = () => ({})): InjectedFront {
  const front = {
    async get (url: string, headers: Record<string, string> = {}): Promise<TestResponse> {
      return fromInject(await front.app.inject({ method: 'GET', url, headers }))
    }
  } as InjectedFront
  before(async () => {
    front.upstream = await startFakeUpstream(behaviour)
    front.app = buildTestFront(front.upstream.url, options())
    await front.app.ready()
  })
  after(async () => {
    await front.app?.close()
    await front.upstream?.close()
  })
  return front
}
