import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError, describeStore, loadConfig, parseStoreLocation } from '../src/config.js'

test('defaults', () => {
  const config = loadConfig({})
  assert.deepEqual(config.store, { dialect: 'sqlite', filename: './data/blog.db' })
  assert.equal(config.storeIsDefault, true)
  assert.equal(config.host, '127.0.0.1')
  assert.equal(config.blogPort, 3000)
  assert.equal(config.postsPort, 3001)
  assert.deepEqual(config.upstreamTimeouts, { totalMs: 10_000, connectMs: 2000, headersMs: 5000, bodyIdleMs: 5000 })
  assert.deepEqual(config.server, { timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 72_000 }, loadShedDelayMs: 1000 })
  assert.equal(config.staleIfErrorS, 0)
  assert.equal(config.cacheMaxBytes, 64 * 1024 * 1024)
  assert.equal(config.apiUrl, undefined)
  assert.ok(Object.isFrozen(config))
})

test('flags override environment variables', () => {
  const config = loadConfig({ BLOG_PORT: '4000', API_URL: 'http://a.example:1' }, { BLOG_PORT: '5000' })
  assert.equal(config.blogPort, 5000)
  assert.equal(config.apiUrl?.href, 'http://a.example:1/')
})

test('store locations by scheme', () => {
  assert.deepEqual(parseStoreLocation('blog.db'), { dialect: 'sqlite', filename: 'blog.db' })
  assert.deepEqual(parseStoreLocation('sqlite:data/x.db'), { dialect: 'sqlite', filename: 'data/x.db' })
  assert.deepEqual(parseStoreLocation('sqlite:///var/lib/blog%20x.db'), { dialect: 'sqlite', filename: '/var/lib/blog x.db' })
  assert.equal(parseStoreLocation('postgresql://u@h/db').dialect, 'postgres')
  assert.deepEqual(parseStoreLocation('mariadb://root@h:3306/db'), { dialect: 'mysql', url: 'mysql://root@h:3306/db' })
  assert.throws(() => parseStoreLocation('mongodb://h/db'), ConfigError)
  assert.throws(() => parseStoreLocation('postgres://[bad'), ConfigError)
})

test('an in-memory SQLite database is refused, naming DATABASE_URL', () => {
  for (const value of ['sqlite::memory:', ':memory:']) {
    assert.throws(() => loadConfig({ DATABASE_URL: value }), (err: unknown) => err instanceof ConfigError && err.setting === 'DATABASE_URL' && /in-memory/.test(err.message))
  }
})

test('printed store URLs hide the password', () => {
  assert.equal(describeStore(parseStoreLocation('postgres://u:hunter2@h/db')), 'postgres://u:***@h/db')
})
