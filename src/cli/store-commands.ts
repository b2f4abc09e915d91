// `migrate` and `seed`: the commands that write the store's schema and sample posts.
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Logger } from 'pino'
import { describeStore, type Config } from '../config.js'
import { StartError } from '../process/start-error.js'
import { storeOptions } from '../process/store-options.js'
import { openStore } from '../store/open-store.js'

export async function runStoreCommand (command: 'migrate' | 'seed', config: Config, logger: Logger): Promise<void> {
  const location = config.store
  if (location.dialect === 'sqlite') {
    // Only `migrate` creates a SQLite file: `seed` would leave an empty one behind.
    if (command === 'seed' && !existsSync(location.filename)) {
      throw new StartError(`cannot seed: the SQLite file ${location.filename} (DATABASE_URL) does not exist; \`blog-read-api migrate\` creates it`)
    }
    mkdirSync(dirname(location.filename), { recursive: true })
  }
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
}
