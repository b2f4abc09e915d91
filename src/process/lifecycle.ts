// The server lifecycle of the `blog-read-api` executable: opens the store, starts the tiers on
// their ports, and on SIGINT/SIGTERM closes them in order within SHUTDOWN_TIMEOUT_MS. With
// WORKERS > 1 this process checks what it can once, then leaves serving to cluster workers.
// Each tier's modules are loaded when the command serves that tier: `front` loads no store
// driver, `posts-api` no upstream client.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { isFleetPrimary, leaveCluster, reportReady, runFleet } from './cluster.js'
import { ConfigError, describeStore, type Config } from '../config.js'
import { openOperations, type ProcessOperations } from '../ops/process-operations.js'
import { SETTINGS } from '../settings.js'
import type { PostStore } from '../store/store.js'
import { listenFailure, missingDatabaseFile, type PortSetting } from './start-error.js'
import { storeOptions } from './store-options.js'
import { frontAppOptions, postsAppOptions, upstreamClientOptions } from './tier-options.js'

/**
 * Opens the configured store. Only the default SQLite file, when it does not exist yet, is
 * created, migrated and seeded; a database the user names is read, never written (a SQLite file
 * named must exist).
 */
async function openServingStore (config: Config, logger: Logger): Promise<PostStore> {
  const { openStore } = await import('../store/open-store.js')
  const location = config.store
  if (location.dialect === 'sqlite' && !existsSync(location.filename)) {
    if (!config.storeIsDefault) throw missingDatabaseFile(location.filename, SETTINGS.DATABASE_URL.default)
    mkdirSync(dirname(location.filename), { recursive: true })
    const store = await openStore(location, storeOptions(config, logger, true))
    await store.migrate()
    await store.checkSchema()
    const count = await store.seed()
    logger.info(`created ${location.filename} with ${count} sample posts`)
    return store
  }

  const store = await openStore(location, storeOptions(config, logger, false))
  try {
    await store.checkSchema()
  } catch (err) {
    await store.close().catch(() => {})
    throw err
  }
  return store
}

async function startPostsApi (config: Config, logger: Logger, ops: ProcessOperations): Promise<FastifyInstance> {
  const { buildPostsApp } = await import('../posts-api/app.js')
  const store = await openServingStore(config, logger)
  const app = buildPostsApp(postsAppOptions(config, { store, logger: logger.child({ tier: 'posts-api' }), ...ops.tierOptions }))
  if (!store.tracksChanges) logger.warn('the store has no change tracking: every answer is read afresh')
  app.addHook('onClose', async () => store.close())
  const { describeSearch } = await import('../posts-api/search-matches.js')
  // Advice too: a store that fails now fails the first search as it would have.
  await describeSearch(store, config.search).then((way) => logger.child({ tier: 'posts-api' }).info(way),
    (err: unknown) => { logger.warn({ err }, 'could not tell which way search runs') })
  const { reportPublishing } = await import('../publishing/startup-report.js')
  // Counting is advice: a store that fails it now fails the first request as it would have.
  await reportPublishing(store, config, logger.child({ tier: 'posts-api' }))
    .catch((err: unknown) => { logger.warn({ err }, 'could not count the rows the publishing rule and SLUG_PATTERN decide') })
  await listen(app, 'POSTS_PORT', config.host, config.postsPort, (address) => `post API listening at ${address} (store ${describeStore(config.store)})`)
  return app
}

async function startFront (config: Config, apiUrls: readonly URL[], logger: Logger, ops: ProcessOperations): Promise<FastifyInstance> {
  const [{ buildFrontApp }, { openUpstreamClient }] = await Promise.all([import('../front/app.js'), import('../front/upstream/client.js')])
  const frontLogger = logger.child({ tier: 'front' })
  const upstream = openUpstreamClient(apiUrls, { ...upstreamClientOptions(config), logger: frontLogger })
  const app = buildFrontApp(frontAppOptions(config, { upstream, logger: frontLogger, ...ops.tierOptions }))
  app.addHook('onClose', async () => upstream.close())
  await listen(app, 'BLOG_PORT', config.host, config.blogPort, (address) => `front API listening at ${address} (upstream ${apiUrls.map((url) => url.href).join(', ')})`)
  return app
}

/** Listens on `host`:`port`; a port in use (or not ours) is a line naming `setting`. */
async function listen (app: FastifyInstance, setting: PortSetting, host: string, port: number, listenTextResolver: (address: string) => string): Promise<void> {
  try {
    await app.listen({ host, port, listenTextResolver })
  } catch (err) {
    await app.close()
    throw listenFailure(err, setting, host, port) ?? err
  }
}

/** The URL at which this process's own post API is reached, from the address it listens on. */
function localApiUrl (app: FastifyInstance): URL {
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the post API has no TCP address')
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address
  return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${address.port}`)
}

/**
 * On SIGINT/SIGTERM: stops accepting, lets requests in flight finish, closes pools, exits 0;
 * tiers close in order (front first, so nothing new reaches the upstream). Exits 1 if that
 * takes longer than SHUTDOWN_TIMEOUT_MS.
 */
function closeOnSignal (apps: FastifyInstance[], logger: Logger, timeoutMs: number): void {
  let closing = false
  const close = (signal: string): void => {
    if (closing) return
    closing = true
    logger.info(`${signal} received; closing`)
    const force = setTimeout(() => {
      logger.error(`shutdown took longer than ${timeoutMs} ms; exiting`)
      process.exit(1)
    }, timeoutMs).unref()
    const closeAll = async (): Promise<void> => {
      for (const app of apps) await app.close()
      clearTimeout(force)
      leaveCluster()
    }
    closeAll().catch((err: unknown) => {
      logger.error({ err }, 'shutdown failed')
      process.exit(1)
    })
  }
  // `on`, not `once`: a Ctrl-C reaches this process twice under `npm start` (from the terminal and
  // forwarded by npm), and with no listener left the second would end it at once.
  process.on('SIGINT', close)
  process.on('SIGTERM', close)
}

export type ServingCommand = 'serve' | 'front' | 'posts-api'

function requireApiUrls (config: Config): readonly URL[] {
  if (config.apiUrls === undefined) throw new ConfigError('API_URL', 'the front needs the upstream post API base URL (API_URL or --api-url)')
  return config.apiUrls
}

/**
 * Starts a command's tiers; returns what to close, in order: the admin listener if any (its
 * /readyz fails first), then the front (so nothing new reaches the upstream), then the post API.
 */
async function startTiers (command: ServingCommand, config: Config, logger: Logger): Promise<FastifyInstance[]> {
  const ops = openOperations(config, logger)
  const withAdmin = async (tiers: Parameters<ProcessOperations['withAdmin']>[0]): Promise<FastifyInstance[]> => {
    try {
      return await ops.withAdmin(tiers)
    } catch (err) {
      throw (config.adminPort === undefined ? undefined : listenFailure(err, 'ADMIN_PORT', config.host, config.adminPort)) ?? err
    }
  }
  switch (command) {
    case 'posts-api':
      return await withAdmin([{ name: 'post API', app: await startPostsApi(config, logger, ops) }])
    case 'front':
      return await withAdmin([{ name: 'front', app: await startFront(config, requireApiUrls(config), logger, ops) }])
    case 'serve': {
      // The post API, then the front calling it (or API_URL). Under a cluster the post API's port
      // is shared, so a worker's front may be answered by any worker's post API: they are alike.
      const posts = await startPostsApi(config, logger, ops)
      let front: FastifyInstance
      try {
        front = await startFront(config, config.apiUrls ?? [localApiUrl(posts)], logger, ops)
      } catch (err) {
        await posts.close()
        throw err
      }
      return await withAdmin([{ name: 'front', app: front }, { name: 'post API', app: posts }])
    }
  }
}

/** The ports each command listens on, besides ADMIN_PORT. */
const TIER_PORTS: Record<ServingCommand, ReadonlyArray<Exclude<PortSetting, 'ADMIN_PORT'>>> = {
  serve: ['BLOG_PORT', 'POSTS_PORT'],
  front: ['BLOG_PORT'],
  'posts-api': ['POSTS_PORT']
}

/** Two listeners of one process on one port: a setting mistake, found before anything listens (0 is any free port). */
function checkDistinctPorts (command: ServingCommand, config: Config): void {
  const ports = TIER_PORTS[command].map((setting) => [setting, setting === 'BLOG_PORT' ? config.blogPort : config.postsPort] as const)
  const taken = new Map<number, PortSetting>()
  for (const [setting, port] of config.adminPort === undefined ? ports : [...ports, ['ADMIN_PORT', config.adminPort] as const]) {
    const other = taken.get(port)
    if (other !== undefined) throw new ConfigError(setting, `${port} is also ${other}; each listener of \`${command}\` needs its own port (0: any free port)`)
    if (port !== 0) taken.set(port, setting)
  }
}

/**
 * What every worker would find wrong, found once before forking, so that it is one line and
 * not one per worker: the settings the command needs, and the store (the default SQLite file
 * is created here, not raced by the workers).
 */
async function checkBeforeFork (command: ServingCommand, config: Config, logger: Logger): Promise<void> {
  if (command === 'front') {
    requireApiUrls(config)
    return
  }
  await (await openServingStore(config, logger)).close()
}

/**
 * Serves `serve`, `front` or `posts-api` until SIGINT/SIGTERM: in this process, or, with
 * WORKERS > 1, in that many cluster workers sharing the ports (each one runs this too).
 */
export async function serve (command: ServingCommand, config: Config, logger: Logger): Promise<void> {
  checkDistinctPorts(command, config)
  if (isFleetPrimary(config.workers)) {
    await checkBeforeFork(command, config, logger)
    // A scrape reaching any worker gets the sum over all of them, gathered here.
    if (config.metricsEnabled) (await import('../ops/cluster-metrics.js')).serveClusterMetrics()
    await runFleet({ workers: config.workers, logger, shutdownTimeoutMs: config.shutdownTimeoutMs })
    return
  }
  closeOnSignal(await startTiers(command, config, logger), logger, config.shutdownTimeoutMs)
  reportReady()
}
