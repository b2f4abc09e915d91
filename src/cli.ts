#!/usr/bin/env node
// The `blog-read-api` executable: parses the command and flags, loads the config, starts tiers.
// A user's mistake (bad setting, missing table, unreachable database) is one line and exit ≠ 0.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { pino, type Logger } from 'pino'
import { BODY_LIMITS } from './body-limits.js'
import { ConfigError, describeStore, flagName, loadConfig, SETTINGS, type Config, type SettingName } from './config.js'
import { buildFrontApp } from './front/app.js'
import { createUpstreamClient, createUpstreamTransport } from './front/upstream-client.js'
import { buildPostsApp } from './posts-api/app.js'
import { openStore, type OpenStoreOptions } from './store/open-store.js'
import type { PostStore } from './store/store.js'

const COMMANDS = {
  serve: 'both tiers in one process (the default): the post API, then the front API calling it',
  front: 'the front API alone (needs API_URL)',
  'posts-api': 'the upstream post API alone',
  migrate: 'create the default `posts` table in DATABASE_URL when it is absent',
  seed: 'insert the sample posts that are not there yet'
} as const
type Command = keyof typeof COMMANDS

const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[]

/** A mistake of the person starting the process: printed as one line, exit code 2. */
class UsageError extends Error {}

function usage (): string {
  const commands = Object.entries(COMMANDS).map(([name, help]) => `  ${name.padEnd(10)} ${help}`)
  const settings = SETTING_NAMES.map((name) => {
    const setting = SETTINGS[name]
    const fallback = setting.default === undefined ? '' : ` (default: ${setting.default})`
    return `  --${flagName(name).padEnd(20)} ${name}: ${setting.help}${fallback}`
  })
  return ['Usage: blog-read-api [command] [--flag value ...]', '', 'Commands:', ...commands, '',
    'Settings (flags override environment variables):', ...settings, ''].join('\n')
}

function parseCommandLine (argv: string[]): { command: Command, flags: Partial<Record<SettingName, string>>, help: boolean } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(SETTING_NAMES.map((name) => [flagName(name), { type: 'string' as const }]))
      }
    })
  } catch (err) {
    throw new UsageError((err as Error).message.split('. ')[0])
  }
  const [command = 'serve', ...extra] = parsed.positionals
  if (!(command in COMMANDS)) throw new UsageError(`unknown command "${command}" (try --help)`)
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (try --help)`)
  const flags: Partial<Record<SettingName, string>> = {}
  for (const name of SETTING_NAMES) {
    const value = (parsed.values as Record<string, unknown>)[flagName(name)]
    if (typeof value === 'string') flags[name] = value
  }
  return { command: command as Command, flags, help: parsed.values.help === true }
}

function storeOptions (config: Config, logger: Logger, writable: boolean): OpenStoreOptions {
  const onPoolError = (err: Error): void => logger.warn({ err }, 'idle database connection lost; the pool will reconnect')
  return { writable, onPoolError, limits: config.storeLimits }
}

/**
 * Opens the configured store. Only the default SQLite file, when it does not exist yet, is
 * created, migrated and seeded; a database the user names is read, never written.
 */
async function openServingStore (config: Config, logger: Logger): Promise<PostStore> {
  const location = config.store
  if (location.dialect === 'sqlite' && config.storeIsDefault && !existsSync(location.filename)) {
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

const serverOptions = (config: Config): { timeouts: Config['serverTimeouts'], loadShedDelayMs: number } =>
  ({ timeouts: config.serverTimeouts, loadShedDelayMs: config.loadShedDelayMs })

async function startPostsApi (config: Config, logger: Logger): Promise<FastifyInstance> {
  const store = await openServingStore(config, logger)
  const app = buildPostsApp({ store, logger: logger.child({ tier: 'posts-api' }), cacheControl: config.cacheControl, server: serverOptions(config) })
  if (!store.tracksChanges) {
    const hint = store.dialect === 'postgres' ? ' (`blog-read-api migrate` installs it)' : ''
    logger.warn(`the store has no change tracking: every answer is read afresh${hint}`)
  }
  app.addHook('onClose', async () => store.close())
  await app.listen({
    host: config.host,
    port: config.postsPort,
    listenTextResolver: (address) => `post API listening at ${address} (store ${describeStore(config.store)})`
  })
  return app
}

async function startFront (config: Config, apiUrl: URL, logger: Logger): Promise<FastifyInstance> {
  const transport = createUpstreamTransport(apiUrl, config.upstreamTimeouts)
  const upstream = createUpstreamClient({ ...transport, timeouts: config.upstreamTimeouts, breakerFailures: config.breakerFailures })
  const app = buildFrontApp({
    upstream,
    logger: logger.child({ tier: 'front' }),
    slugPattern: config.slugPattern,
    cacheControl: config.cacheControl,
    cacheMaxBytes: config.cacheMaxBytes,
    staleIfErrorS: config.staleIfErrorS,
    corsOrigins: config.corsOrigins,
    ...BODY_LIMITS,
    server: serverOptions(config)
  })
  app.addHook('onClose', async () => transport.dispatcher.close())
  await app.listen({
    host: config.host,
    port: config.blogPort,
    listenTextResolver: (address) => `front API listening at ${address} (upstream ${apiUrl.href})`
  })
  return app
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
    }
    closeAll().catch((err: unknown) => {
      logger.error({ err }, 'shutdown failed')
      process.exit(1)
    })
  }
  process.once('SIGINT', close)
  process.once('SIGTERM', close)
}

async function run (command: Command, config: Config, logger: Logger): Promise<void> {
  switch (command) {
    case 'migrate':
    case 'seed': {
      const location = config.store
      if (location.dialect === 'sqlite') mkdirSync(dirname(location.filename), { recursive: true })
      const store = await openStore(location, storeOptions(config, logger, true))
      try {
        if (command === 'migrate') {
          await store.migrate()
          logger.info(`the posts table is ready in ${describeStore(location)}`)
        } else {
          await store.checkSchema()
          logger.info(`inserted ${await store.seed()} sample posts into ${describeStore(location)}`)
        }
      } finally {
        await store.close()
      }
      return
    }
    case 'posts-api':
      closeOnSignal([await startPostsApi(config, logger)], logger, config.shutdownTimeoutMs)
      return
    case 'front': {
      if (config.apiUrl === undefined) throw new ConfigError('API_URL', 'the front needs the upstream post API base URL (API_URL or --api-url)')
      closeOnSignal([await startFront(config, config.apiUrl, logger)], logger, config.shutdownTimeoutMs)
      return
    }
    case 'serve': {
      const posts = await startPostsApi(config, logger)
      try {
        closeOnSignal([await startFront(config, config.apiUrl ?? localApiUrl(posts), logger), posts], logger, config.shutdownTimeoutMs)
      } catch (err) {
        await posts.close()
        throw err
      }
    }
  }
}

/** One line for the user: the error's message and, for wrapped errors, what caused it. */
function describeFailure (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
    const { address, port } = err as unknown as { address?: string, port?: number }
    return `cannot listen on ${address ?? ''}:${port ?? ''} (${code}): check HOST, BLOG_PORT and POSTS_PORT`
  }
  const cause = err.cause instanceof Error ? `: ${err.cause.message || (err.cause as NodeJS.ErrnoException).code}` : ''
  return (err.message || err.name) + cause
}

async function main (): Promise<void> {
  const { command, flags, help } = parseCommandLine(process.argv.slice(2))
  if (help) {
    process.stdout.write(usage())
    return
  }
  const config = loadConfig(process.env, flags)
  const logger = pino({ level: config.logLevel, name: 'blog-read-api' })
  try {
    await run(command, config, logger)
  } catch (err) {
    if (err instanceof ConfigError) throw err
    throw new Error(`cannot start (store ${describeStore(config.store)}): ${describeFailure(err)}`)
  }
}

main().catch((err: unknown) => {
  const userMistake = err instanceof ConfigError || err instanceof UsageError
  process.stderr.write(`blog-read-api: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = userMistake ? 2 : 1
})
