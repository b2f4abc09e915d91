// Chooses the store by DATABASE_URL's scheme; only the chosen driver is loaded.
import type { StoreLimits, StoreLocation } from '../config.js'
import type { PostStore } from './store.js'
import type { PublishingOptions } from '../publishing/publishing-options.js'

export interface OpenStoreOptions {
  /** SQLite only: open for writing (migrate, seed, a fresh default file). */
  writable: boolean
  /** PostgreSQL only: errors of idle pooled connections, for the log. */
  onPoolError: (err: Error) => void
  /** PostgreSQL and MySQL only. */
  limits: StoreLimits
  /** The publishing rule (default: every row is public). */
  publishing?: PublishingOptions
}

export async function openStore (location: StoreLocation, { writable, onPoolError, limits, publishing }: OpenStoreOptions): Promise<PostStore> {
  switch (location.dialect) {
    case 'sqlite': {
      const { openSqliteStore } = await import('./sqlite-store.js')
      return openSqliteStore(location.filename, { writable }, publishing)
    }
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres-store.js')
      return openPostgresStore(location.url, onPoolError, limits, publishing)
    }
    case 'mysql': {
      const { openMysqlStore } = await import('./mysql-store.js')
      return openMysqlStore(location.url, limits, publishing)
    }
  }
}
