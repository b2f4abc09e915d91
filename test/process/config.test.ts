import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { describe, test } from 'node:test'
import { ConfigError, describeStore, loadConfig, parseSetting, parseStoreLocation, type Config } from '../../src/config.js'
import { COMMAND_NAMES, flagName, SETTING_NAMES, SETTINGS, type Setting, type SettingName } from '../../src/settings.js'

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
  assert.equal(config.apiUrls, undefined)
  assert.deepEqual(config.upstreamHealth, { ejectFailures: 3, probeIntervalMs: 250 })
  assert.deepEqual(config.storeLimits, { poolSize: 10, connectTimeoutMs: 3000, statementTimeoutMs: 5000, preparedStatements: false })
  assert.ok(Object.isFrozen(config))
})

test('DB_PREPARED_STATEMENTS is on or off', () => {
  assert.equal(loadConfig({ DB_PREPARED_STATEMENTS: 'on' }).storeLimits.preparedStatements, true)
  assert.throws(() => loadConfig({ DB_PREPARED_STATEMENTS: 'yes' }), (err: unknown) => err instanceof ConfigError && err.setting === 'DB_PREPARED_STATEMENTS')
})

test('flags override environment variables', () => {
  const config = loadConfig({ BLOG_PORT: '4000', API_URL: 'http://a.example:1' }, { BLOG_PORT: '5000' })
  assert.equal(config.blogPort, 5000)
  assert.deepEqual(config.apiUrls?.map((url) => url.href), ['http://a.example:1/'])
})

test('API_URL: several base URLs, comma-separated, each with its own base path', () => {
  const config = loadConfig({ API_URL: 'http://a.example:1, http://b.example:2/blog-backend/,https://a.example:3' })
  assert.deepEqual(config.apiUrls?.map((url) => url.href), ['http://a.example:1/', 'http://b.example:2/blog-backend/', 'https://a.example:3/'])
})

test('API_URL: an empty entry, a repeated URL or a bad one names the setting', () => {
  for (const [value, message] of [
    ['http://a.example:1,,http://b.example:2', /^invalid API_URL: entry 2 of the comma-separated list is empty$/],
    ['http://a.example:1,', /^invalid API_URL: entry 2 of the comma-separated list is empty$/],
    ['http://a.example:1,http://a.example:1/', /^invalid API_URL: "http:\/\/a.example:1\/" is listed twice$/],
    ['http://a.example:1,ftp://b.example', /^invalid API_URL: expected an http:\/\/ or https:\/\/ URL$/],
    ['http://a.example:1,b.example', /^invalid API_URL: "b.example" is not a URL$/]
  ] as const) {
    assert.throws(() => loadConfig({ API_URL: value }), (err: unknown) => err instanceof ConfigError && err.setting === 'API_URL' && message.test(err.message), value)
  }
})

test('upstream health settings: UPSTREAM_EJECT_FAILURES 0 means never; probes at least 10 ms apart', () => {
  assert.equal(loadConfig({ UPSTREAM_EJECT_FAILURES: '0' }).upstreamHealth.ejectFailures, 0)
  assert.equal(loadConfig({}, { UPSTREAM_PROBE_INTERVAL_MS: '500' }).upstreamHealth.probeIntervalMs, 500)
  assert.throws(() => loadConfig({ UPSTREAM_PROBE_INTERVAL_MS: '5' }), /^ConfigError: invalid UPSTREAM_PROBE_INTERVAL_MS: expected at least 10 ms$/)
  assert.throws(() => loadConfig({ UPSTREAM_EJECT_FAILURES: '-1' }), /invalid UPSTREAM_EJECT_FAILURES/)
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

test('WORKERS: 1 by default, a count, or auto (one per core); anything else names the setting', () => {
  assert.equal(loadConfig({}).workers, 1)
  assert.equal(loadConfig({ WORKERS: '3' }).workers, 3)
  assert.equal(loadConfig({}, { WORKERS: 'auto' }).workers, availableParallelism())
  for (const value of ['0', '257', '1.5', 'all']) {
    assert.throws(() => loadConfig({ WORKERS: value }), (err: unknown) => err instanceof ConfigError && err.setting === 'WORKERS')
  }
})

test('metrics are on by default and served on the tiers\' ports; METRICS=off and ADMIN_PORT change that', () => {
  const defaults = loadConfig({})
  assert.equal(defaults.metricsEnabled, true)
  assert.equal(defaults.adminPort, undefined)
  const moved = loadConfig({ METRICS: 'off' }, { ADMIN_PORT: '9464' })
  assert.equal(moved.metricsEnabled, false)
  assert.equal(moved.adminPort, 9464)
  assert.throws(() => loadConfig({ METRICS: 'yes' }), (err: unknown) => err instanceof ConfigError && err.setting === 'METRICS')
  assert.throws(() => loadConfig({ ADMIN_PORT: '65536' }), (err: unknown) => err instanceof ConfigError && err.setting === 'ADMIN_PORT')
})

describe('the settings table', () => {
  test('each setting has a flag, a value text, help, readers among the commands, and a default its schema accepts (or says what unset means)', () => {
    for (const name of SETTING_NAMES) {
      const setting: Setting = SETTINGS[name]
      assert.match(flagName(name), /^[a-z0-9]+(-[a-z0-9]+)*$/, name)
      assert.ok(setting.value !== '' && setting.help !== '', name)
      assert.ok(setting.readBy.length > 0 && setting.readBy.every((command) => COMMAND_NAMES.includes(command)), name)
      if (setting.default === undefined) {
        assert.ok(setting.unset !== undefined, `${name}: what unset means`)
        assert.equal(parseSetting(name, undefined), undefined, name)
      } else {
        assert.doesNotThrow(() => parseSetting(name, undefined), name)
      }
    }
  })

  // A value other than the default for every setting: each must change the Config, so a setting
  // in the table that the loader forgot to read fails here (as does one missing from this list).
  const OTHER_VALUES: Record<SettingName, string> = {
    DATABASE_URL: 'other.db',
    API_URL: 'http://a.example:1',
    HOST: '0.0.0.0',
    BLOG_PORT: '4000',
    POSTS_PORT: '4001',
    LOG_LEVEL: 'warn',
    SLUG_PATTERN: '^[a-z]+$',
    CACHE_CONTROL: 'max-age=60',
    PUBLISHED_ONLY: 'true',
    PREVIEW_SECRET: 'a-preview-secret-of-at-least-32-characters',
    SYNC_POLL_MS: '1234',
    WEBHOOK_URLS: 'https://hooks.example/a,http://127.0.0.1:9/b?token=x',
    WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    CACHE_MAX_MB: '1',
    CACHE_DISK_MAX_MB: '2',
    CORS_ORIGIN: 'off',
    CACHE_TAG_HEADERS: 'xkey',
    UPSTREAM_TIMEOUT_MS: '1234',
    UPSTREAM_CONNECT_TIMEOUT_MS: '1234',
    UPSTREAM_HEADERS_TIMEOUT_MS: '1234',
    UPSTREAM_BODY_TIMEOUT_MS: '1234',
    UPSTREAM_EJECT_FAILURES: '7',
    UPSTREAM_PROBE_INTERVAL_MS: '1234',
    STALE_IF_ERROR_S: '7',
    HEADERS_TIMEOUT_MS: '1234',
    REQUEST_TIMEOUT_MS: '1234',
    KEEP_ALIVE_TIMEOUT_MS: '1234',
    LOAD_SHED_DELAY_MS: '1234',
    SHUTDOWN_TIMEOUT_MS: '1234',
    WORKERS: '7',
    METRICS: 'off',
    ADMIN_PORT: '9464',
    DB_POOL_SIZE: '7',
    DB_CONNECT_TIMEOUT_MS: '1234',
    DB_PREPARED_STATEMENTS: 'on',
    DB_STATEMENT_TIMEOUT_MS: '1234',
    STORE_CONCURRENCY: '7',
    MARKDOWN_COLUMNS: 'body,notes',
    SEARCH_COLUMNS: 'title,body',
    SEARCH_LANGUAGE: 'simple',
    SITE_URL: 'https://blog.example',
    POST_URL_TEMPLATE: '{site}/posts/{slug}/',
    FEED_SIZE: '7'
  }

  test('every setting reaches the Config: as an environment variable, and as a flag that wins over it', () => {
    const text = (config: Config): string => JSON.stringify(config, (_key, value: unknown) => value instanceof RegExp ? value.source : value)
    const defaults = text(loadConfig({}))
    for (const name of SETTING_NAMES) {
      const fromEnv = text(loadConfig({ [name]: OTHER_VALUES[name] }))
      assert.notEqual(fromEnv, defaults, `${name} changes nothing`)
      assert.equal(text(loadConfig({ [name]: 'not valid either way !' }, { [name]: OTHER_VALUES[name] })), fromEnv, `${name}: the flag wins`)
    }
  })

  test('an empty value is unset: the default applies', () => {
    assert.equal(loadConfig({ BLOG_PORT: '' }).blogPort, 3000)
    assert.equal(loadConfig({ DATABASE_URL: '' }).storeIsDefault, true)
  })

  test('cache tag headers: Surrogate-Key and Cache-Tag by default; empty or off names none', () => {
    assert.deepEqual(loadConfig({}).cacheTagHeaders, ['Surrogate-Key', 'Cache-Tag'])
    assert.deepEqual(loadConfig({ CACHE_TAG_HEADERS: '' }).cacheTagHeaders, [])
    assert.deepEqual(loadConfig({}, { CACHE_TAG_HEADERS: 'off' }).cacheTagHeaders, [])
    assert.deepEqual(parseSetting('CACHE_TAG_HEADERS', 'Surrogate-Key, Edge-Cache-Tag'), ['Surrogate-Key', 'Edge-Cache-Tag'])
    assert.throws(() => parseSetting('CACHE_TAG_HEADERS', 'Cache Tag'), /^ConfigError: invalid CACHE_TAG_HEADERS: "Cache Tag" is not a header name$/)
    assert.throws(() => parseSetting('CACHE_TAG_HEADERS', 'Surrogate-Key,,xkey'), /"" is not a header name/)
    assert.throws(() => parseSetting('CACHE_TAG_HEADERS', 'xkey,XKey'), /XKey is listed twice/)
    assert.throws(() => parseSetting('CACHE_TAG_HEADERS', 'ETag'), /ETag is a header the answers carry already/)
  })

  test('a refused value names the setting and says why, in one line', () => {
    assert.throws(() => parseSetting('BLOG_PORT', 'abc'), (err: unknown) => err instanceof ConfigError && err.message === 'invalid BLOG_PORT: expected a port number')
    assert.throws(() => parseSetting('CORS_ORIGIN', 'https://a.example/path'), /^ConfigError: invalid CORS_ORIGIN: "https:\/\/a.example\/path" is not an origin like https:\/\/example.com$/)
    assert.deepEqual(parseSetting('CORS_ORIGIN', 'https://a.example, https://b.example'), ['https://a.example', 'https://b.example'])
  })
})
