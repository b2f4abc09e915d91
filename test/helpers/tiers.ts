// Both tiers on ephemeral loopback ports, as the CLI wires them, for end-to-end tests.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildFrontApp, type FrontAppOptions } from '../../src/front/app.js'
import { createUpstreamClient } from '../../src/front/upstream-client.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import type { PostStore } from '../../src/store/store.js'

export const silentLogger = pino({ level: 'silent' })

export interface RunningApp {
  app: FastifyInstance
  url: string
  port: number
}

export async function listen (app: FastifyInstance): Promise<RunningApp> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { app, url: `http://127.0.0.1:${port}`, port }
}

/** A front over `apiUrl`; its circuit breaker is off unless asked, so fault tests see every mapping. */
export async function startFront (apiUrl: URL, options: Partial<FrontAppOptions> & { timeoutMs?: number, breakerFailures?: number } = {}): Promise<RunningApp> {
  const upstream = createUpstreamClient({ baseUrl: apiUrl, timeouts: { totalMs: options.timeoutMs ?? 2000 }, breaker: { failures: options.breakerFailures ?? 0 } })
  const { timeoutMs: _timeoutMs, breakerFailures: _breakerFailures, ...frontOptions } = options
  const app = buildFrontApp({ upstream, logger: silentLogger, ...frontOptions })
  app.addHook('onClose', async () => upstream.close())
  return await listen(app)
}

export interface Tiers {
  posts: RunningApp
  front: RunningApp
  close: () => Promise<void>
}

/** Starts the post API over `store` and a front calling it; closing them closes the store too. */
export async function startTiers (store: PostStore): Promise<Tiers> {
  const postsApp = buildPostsApp({ store, logger: silentLogger })
  const posts = await listen(postsApp)
  const front = await startFront(new URL(posts.url))
  return {
    posts,
    front,
    close: async () => {
      await front.app.close()
      await posts.app.close()
      await store.close()
    }
  }
}
