// Both tiers on ephemeral loopback ports, as the CLI wires them, for end-to-end tests.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildFrontApp, type FrontAppOptions } from '../../src/front/app.js'
import { openUpstreamClient } from '../../src/front/upstream/client.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { frontAppOptions, postsAppOptions, upstreamClientOptions } from '../../src/process/tier-options.js'
import type { PostStore } from '../../src/store/store.js'
import { testConfig } from './config.js'
import { openTestStore, type TestDatabase } from './databases.js'

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

export type FrontTestOptions = Partial<Omit<FrontAppOptions, 'upstream'>> & { timeoutMs?: number, ejectFailures?: number, probeIntervalMs?: number }

/**
 * A front over `apiUrl` (one upstream or several), listening, configured as the executable
 * configures it (tier-options.ts) from the settings table's defaults (`testConfig()`), with
 * `options` over them; it never
 * takes an upstream out of rotation unless asked (`ejectFailures`), so fault tests see every
 * mapping, its upstream budget is 2 s unless `timeoutMs` says, and it sheds no load unless
 * `options.server` says (`testConfig()`).
 */
export async function startFront (apiUrl: URL | URL[], options: FrontTestOptions = {}): Promise<RunningApp> {
  return await listen(buildTestFront(apiUrl, options))
}

/** The front of `startFront`, not listening yet (to adjust its server first). */
export function buildTestFront (apiUrl: URL | URL[], options: FrontTestOptions = {}): FastifyInstance {
  const { timeoutMs = 2000, ejectFailures = 0, probeIntervalMs, ...frontOptions } = options
  const config = testConfig({
    UPSTREAM_TIMEOUT_MS: String(timeoutMs),
    UPSTREAM_EJECT_FAILURES: String(ejectFailures),
    ...(probeIntervalMs === undefined ? {} : { UPSTREAM_PROBE_INTERVAL_MS: String(probeIntervalMs) })
  })
  const upstream = openUpstreamClient(Array.isArray(apiUrl) ? apiUrl : [apiUrl], upstreamClientOptions(config))
  const app = buildFrontApp({ ...frontAppOptions(config, { upstream, logger: silentLogger }), ...frontOptions })
  app.addHook('onClose', async () => upstream.close())
  return app
}

export interface Tiers {
  posts: RunningApp
  front: RunningApp
  close: () => Promise<void>
}

export interface TierOptions {
  /** Over the defaults of both tiers. */
  settings?: Record<string, string>
  /** Both tiers' clock. */
  now?: () => number
  /** Sees each app before it listens (to add a hook). */
  beforeListen?: (tier: 'posts' | 'front', app: FastifyInstance) => void
}

/**
 * Starts the post API over `store` and a front calling it; closing them closes the store too, and
 * so does a failure to start them (after closing what had started). Neither sheds load unless
 * `settings` says (`testConfig()`).
 */
export async function startTiers (store: PostStore, { settings = {}, now, beforeListen }: TierOptions = {}): Promise<Tiers> {
  const config = testConfig(settings)
  const started: FastifyInstance[] = []
  try {
    const postsApp = buildPostsApp(postsAppOptions(config, { store, logger: silentLogger, ...(now === undefined ? {} : { now }) }))
    started.push(postsApp)
    beforeListen?.('posts', postsApp)
    const posts = await listen(postsApp)
    const { cacheControl, cacheTagHeaders, feeds } = config
    const frontApp = buildTestFront(new URL(posts.url), { cacheControl, cacheTagHeaders, feeds, server: config.server, ...(now === undefined ? {} : { now }) })
    started.push(frontApp)
    beforeListen?.('front', frontApp)
    const front = await listen(frontApp)
    return { posts, front, close: async () => { await closeAll(store, started) } }
  } catch (err) {
    await closeAll(store, started)
    throw err
  }
}

/** Closes `apps`, the last started first, then `store`, whatever became of them. */
async function closeAll (store: PostStore, apps: readonly FastifyInstance[]): Promise<void> {
  try {
    for (const app of [...apps].reverse()) await app.close()
  } finally {
    await store.close()
  }
}

/** Runs `run` against both tiers serving `store` (startTiers: the store is closed too if they cannot start), then closes them, whatever `run` did. */
export async function withTiers (store: PostStore, run: (tiers: Tiers) => Promise<void>): Promise<void> {
  const tiers = await startTiers(store)
  try {
    await run(tiers)
  } finally {
    await tiers.close()
  }
}

/** Both tiers over `database`, through a store opened for serving (as `posts-api` opens it). */
export async function startTiersOn (database: TestDatabase): Promise<Tiers> {
  const store = await openTestStore(database.location)
  try {
    await store.checkSchema()
  } catch (err) {
    await store.close()
    throw err
  }
  return await startTiers(store)
}
