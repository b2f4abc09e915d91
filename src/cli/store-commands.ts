// `migrate` and `seed`: the commands that write the store's schema and sample posts.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Logger } from 'pino'
import { describeStore, type Config } from '../config.js'
import { StartError } from '../process/start-error.js'
import { storeOptions } from '../process/store-options.js'
import { openStore } from '../store/open-store.js'
import type { MigrateOutcome, ViewTracking } from '../store/store.js'

/**
 * The longest statement of `migrate`: building an index reads the whole table (the search index of
 * 10,000 posts of 600 words took over DB_STATEMENT_TIMEOUT_MS's default 5 s on PostgreSQL), a
 * one-off the serving bound must not cut short.
 */
const MIGRATE_STATEMENT_TIMEOUT_MS = 60 * 60 * 1000

/** What `migrate` did, in one line. */
export function describeMigration (outcome: MigrateOutcome | void, where: string): string {
  if (outcome === undefined || outcome.posts === 'created') return `the posts table is ready in ${where}`
  if (outcome.posts === 'table') return `the posts table is ready in ${where}: ${describeAdded(outcome.added)}`
  return `posts in ${where} is a view: ${describeViewTracking(outcome.tracking, outcome.added)}; it is served like a table ` +
    '(index the tables it reads on (published_at, slug) for the list order)'
}

const describeAdded = (added: readonly string[]): string => added.length === 0 ? 'it had everything, nothing added' : `added ${added.join(', ')}`

function describeViewTracking (tracking: ViewTracking, added: readonly string[]): string {
  switch (tracking.kind) {
    case 'installed': {
      const tables = tracking.tables.length === 0 ? 'none: its rows never change' : tracking.tables.join(', ')
      return `change tracking is on the tables it reads (${tables}): ${describeAdded(added)} (run migrate again after changing the view)`
    }
    case 'built-in': return 'nothing was created or changed, and change tracking needs nothing: the store sees every commit to the tables it reads'
    case 'none': return 'nothing was created or changed: this store has no change tracking to install, every answer is read afresh'
    case 'refused': return `no change tracking can be installed (${tracking.reason}), so each post API process keeps posts versions of its own; ` +
      'to share them, make posts a view over ordinary tables and run migrate again'
  }
}

/** `search`: `migrate --search`, which also creates the store's search index (the only write search makes). */
export async function runStoreCommand (command: 'migrate' | 'seed', config: Config, logger: Logger, { search = false } = {}): Promise<void> {
  const location = config.store
  if (location.dialect === 'sqlite') {
    // Only `migrate` creates a SQLite file: `seed` would leave an empty one behind.
    if (command === 'seed' && !existsSync(location.filename)) {
      throw new StartError(`cannot seed: the SQLite file ${location.filename} (DATABASE_URL) does not exist; \`blog-read-api migrate\` creates it`)
    }
    mkdirSync(dirname(location.filename), { recursive: true })
  }
  const options = storeOptions(config, logger, true)
  const limits = command === 'migrate' ? { ...options.limits, statementTimeoutMs: Math.max(options.limits.statementTimeoutMs, MIGRATE_STATEMENT_TIMEOUT_MS) } : options.limits
  const store = await openStore(location, { ...options, limits })
  try {
    if (command === 'migrate') {
      logger.info(describeMigration(await store.migrate(search ? { search: config.search } : {}), describeStore(location)))
    } else {
      await store.checkSchema()
      logger.info(`inserted ${await store.seed()} sample posts into ${describeStore(location)}`)
    }
  } finally {
    await store.close()
  }
}
