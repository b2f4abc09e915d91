// Chooses the store by DATABASE_URL's scheme; only the chosen driver is loaded.
import type { StoreLocation } from '../config.js'
import { DEFAULT_STORE_LIMITS, type PostStore, type StoreLimits } from './store.js'

export interface OpenStoreOptions {
  /** SQLite only: open for writing (migrate, seed, a fresh default file). */
  writable?: boolean
  /** Errors of idle pooled connections, for the log. */
  onPoolError?: (err: Error) => void
  limits?: StoreLimits
}

export async function openStore (location: StoreLocation, options: OpenStoreOptions = {}): Promise<PostStore> {
  switch (location.dialect) {
    case 'sqlite': {
      const { openSqliteStore } = await import('./sqlite-store.js')
      return openSqliteStore(location.filename, { writable: options.writable ?? false })
    }
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres-store.js')
      return openPostgresStore(location.url, options.onPoolError ?? (() => {}), options.limits ?? DEFAULT_STORE_LIMITS)
    }
    case 'mysql': {
      const { openMysqlStore } = await import('./mysql-store.js')
      return openMysqlStore(location.url, options.limits ?? DEFAULT_STORE_LIMITS)
    }
  }
}
