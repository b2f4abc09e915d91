// How the serving commands, `migrate` and `seed` open the store: pool bounds from the settings,
// idle-connection losses logged.
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { OpenStoreOptions } from '../store/open-store.js'

export function storeOptions (config: Config, logger: Logger, writable: boolean): OpenStoreOptions {
  const onPoolError = (err: Error): void => logger.warn({ err }, 'idle database connection lost; the pool will reconnect')
  return { writable, onPoolError, limits: config.storeLimits, publishing: { publishedOnly: config.publishedOnly } }
}
