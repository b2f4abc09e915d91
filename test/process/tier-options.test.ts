// The one mapping from settings to tier options: what STORE_CONCURRENCY bounds depends on the store.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { silentLogger } from '../helpers/tiers.js'

const parts = { store: createCountingStore([]), logger: silentLogger }

test('STORE_CONCURRENCY bounds a database server\'s reads, not SQLite\'s (they run one at a time on the event loop)', () => {
  for (const url of ['postgres://u@127.0.0.1/blog', 'mysql://u@127.0.0.1/blog']) {
    assert.equal(postsAppOptions(loadConfig({ DATABASE_URL: url, STORE_CONCURRENCY: '7' }), parts).storeConcurrency, 7, url)
  }
  assert.equal(postsAppOptions(loadConfig({ DATABASE_URL: './blog.db', STORE_CONCURRENCY: '7' }), parts).storeConcurrency, undefined)
})
