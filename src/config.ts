// The only reader of settings: environment variables, overridden by CLI flags of the same name
// (`BLOG_PORT` ↔ `--blog-port`). A bad value stops start-up with one line naming the setting.
import { availableParallelism } from 'node:os'
import { z } from 'zod'
import { DEFAULT_SLUG_PATTERN, SLUG_MAX_LENGTH } from './contract/slug.js'

export type StoreLocation =
  | { dialect: 'sqlite', filename: string }
  | { dialect: 'postgres', url: string }
  | { dialect: 'mysql', url: string }

/** The validated, frozen settings of one process. */
export interface Config {
  readonly store: StoreLocation
  /** True when DATABASE_URL was not given: only then may start-up create and seed the file. */
  readonly storeIsDefault: boolean
  /** The upstream post APIs' base URLs (one or more); undefined in combined mode until the upstream listens. */
  readonly apiUrls: readonly URL[] | undefined
  readonly host: string
  readonly blogPort: number
  readonly postsPort: number
  /** The front's budgets for one upstream call. */
  readonly upstreamTimeouts: UpstreamTimeouts
  /** Server-side limits on clients, both tiers. */
  readonly server: ServerOptions
  /** Store pool bounds (PostgreSQL, MySQL). */
  readonly storeLimits: StoreLimits
  /** When the front takes an upstream out of rotation, and how it watches for its return. */
  readonly upstreamHealth: UpstreamHealthSettings
  /** Seconds a front copy may be served, flagged, when the upstream fails (0: never). */
  readonly staleIfErrorS: number
  /** Longest graceful shutdown before the process exits anyway. */
  readonly shutdownTimeoutMs: number
  /** Processes serving the same ports (node:cluster); 1: this process serves, no cluster. */
  readonly workers: number
  readonly logLevel: string
  readonly slugPattern: RegExp
  /** `Cache-Control` of successful answers, on both tiers. */
  readonly cacheControl: string
  /** Bytes of upstream bodies the front keeps for revalidation. */
  readonly cacheMaxBytes: number
  /** Origins the front allows cross-origin reads from: '*' (any), a list, or none ([]). */
  readonly corsOrigins: '*' | string[]
  /** Whether Prometheus metrics are kept and served (METRICS). */
  readonly metricsEnabled: boolean
  /** The port of the process's operational listener; undefined: /metrics on each tier's port. */
  readonly adminPort: number | undefined
}

export interface UpstreamTimeouts {
  /** The whole budget of one call, retry included, until the body is read (then 504). */
  totalMs: number
  /** Establishing a TCP connection. */
  connectMs: number
  /** From sending the request to the end of the response headers. */
  headersMs: number
  /** Longest silence between two body chunks. */
  bodyIdleMs: number
}

export interface UpstreamHealthSettings {
  /** Consecutive calls an upstream refused, broke or let time out before it leaves rotation (0: never). */
  ejectFailures: number
  /** Pause between two probes of an upstream out of rotation. */
  probeIntervalMs: number
}

interface ServerTimeouts {
  /** A client must send its request headers within this (slowloris). */
  headersMs: number
  /** A client must send its whole request within this. */
  requestMs: number
  /** Idle keep-alive connections are closed after this; keep it above any load balancer's. */
  keepAliveMs: number
}

/** Bounds of a server store's pool (PostgreSQL, MySQL); SQLite has one connection. */
export interface StoreLimits {
  poolSize: number
  /** Wait for a free or new connection; pg-pool's default is forever. */
  connectTimeoutMs: number
  /** Longest statement, enforced by the server. */
  statementTimeoutMs: number
  /**
   * PostgreSQL: the connection is a session of its own (no transaction pooler in between), so the
   * change-token query may be prepared once per connection and the time-out set at connect time.
   */
  preparedStatements: boolean
}

/** What both tiers' HTTP servers take from the settings (http-base). */
export interface ServerOptions {
  timeouts: ServerTimeouts
  /** Event-loop delay beyond which requests are shed with 503 + Retry-After (0: never). */
  loadShedDelayMs: number
}

const DEFAULT_DATABASE_FILE = './data/blog.db'

export class ConfigError extends Error {
  constructor (readonly setting: string, message: string) {
    super(`invalid ${setting}: ${message}`)
    this.name = 'ConfigError'
  }
}

const milliseconds = (min: number): z.ZodType<number> => z.coerce.number({ error: 'expected milliseconds' })
  .int('expected whole milliseconds').min(min, `expected at least ${min} ms`).max(600_000, 'expected at most 600000 ms')

const count = (min: number, max: number): z.ZodType<number> => z.coerce.number({ error: 'expected a whole number' })
  .int('expected a whole number').min(min, `expected at least ${min}`).max(max, `expected at most ${max}`)

const port = z.coerce.number({ error: 'expected a port number' })
  .int('expected a whole port number').min(0, 'expected a port from 0 to 65535').max(65535, 'expected a port from 0 to 65535')

/** Every setting: its environment variable, default and meaning. The README table follows this. */
export const SETTINGS = {
  DATABASE_URL: { default: DEFAULT_DATABASE_FILE, help: 'store: a SQLite file path or sqlite: URL, postgres://, mysql:// or mariadb://' },
  API_URL: { default: undefined, help: 'base URLs of the upstream post APIs, comma-separated (front); combined mode uses its own upstream' },
  HOST: { default: '127.0.0.1', help: 'interface both tiers listen on' },
  BLOG_PORT: { default: '3000', help: 'front API port' },
  POSTS_PORT: { default: '3001', help: 'upstream post API port' },
  UPSTREAM_TIMEOUT_MS: { default: '10000', help: "front's whole budget for one upstream call, retry included (then 504)" },
  UPSTREAM_CONNECT_TIMEOUT_MS: { default: '2000', help: 'front: connecting to the upstream' },
  UPSTREAM_HEADERS_TIMEOUT_MS: { default: '5000', help: "front: from request sent to the upstream's response headers" },
  UPSTREAM_BODY_TIMEOUT_MS: { default: '5000', help: "front: longest silence within the upstream's response body" },
  UPSTREAM_EJECT_FAILURES: { default: '3', help: 'front: consecutive calls an upstream refused, broke or let time out before it leaves rotation (0: never)' },
  UPSTREAM_PROBE_INTERVAL_MS: { default: '250', help: 'front: pause between probes (GET /readyz) of an upstream out of rotation' },
  STALE_IF_ERROR_S: { default: '0', help: 'front: serve its last good copy, flagged with Cache-Status, for this many seconds when the upstream fails (0: never)' },
  HEADERS_TIMEOUT_MS: { default: '10000', help: 'both: a client must send its request headers within this' },
  REQUEST_TIMEOUT_MS: { default: '30000', help: 'both: a client must send its whole request within this' },
  KEEP_ALIVE_TIMEOUT_MS: { default: '72000', help: "both: idle keep-alive connections close after this (keep it above your load balancer's idle time-out)" },
  LOAD_SHED_DELAY_MS: { default: '1000', help: 'both: event-loop delay beyond which requests get 503 + Retry-After at once (0: never)' },
  SHUTDOWN_TIMEOUT_MS: { default: '10000', help: 'on SIGTERM/SIGINT: longest wait for requests in flight before exiting anyway' },
  WORKERS: { default: '1', help: "serve, front, posts-api: processes sharing the ports, 'auto' for one per core (1: no cluster)" },
  DB_POOL_SIZE: { default: '10', help: 'post API: PostgreSQL/MySQL connections' },
  DB_CONNECT_TIMEOUT_MS: { default: '3000', help: 'post API: wait for a store connection (then 503)' },
  DB_STATEMENT_TIMEOUT_MS: { default: '5000', help: 'post API: longest store statement (then 503)' },
  DB_PREPARED_STATEMENTS: { default: 'off', help: "post API, PostgreSQL: 'on' prepares the change-token query once per connection and sets the statement time-out at connect time (less server work per answer); only on a direct connection, never behind a transaction pooler such as PgBouncer" },
  LOG_LEVEL: { default: 'info', help: 'pino level: fatal, error, warn, info, debug, trace or silent' },
  SLUG_PATTERN: { default: DEFAULT_SLUG_PATTERN.source, help: `regular expression a slug must match (anchored; at most ${SLUG_MAX_LENGTH} characters)` },
  CACHE_CONTROL: { default: 'no-cache', help: 'Cache-Control of successful answers (no-cache: caches must revalidate, cheaply, with the ETag)' },
  CORS_ORIGIN: { default: '*', help: "front: origins allowed to read cross-origin: '*', a comma-separated list of origins, or 'off'" },
  CACHE_MAX_MB: { default: '64', help: "memory for the front's copies of upstream bodies, revalidated on every request" },
  METRICS: { default: 'on', help: "both: 'on' keeps Prometheus metrics, served at GET /metrics; 'off' keeps none and answers no /metrics" },
  ADMIN_PORT: { default: undefined, help: "a port of its own (on HOST) for the process's /metrics, /healthz and /readyz; unset: /metrics on each tier's port (/healthz and /readyz stay there either way)" }
} as const satisfies Record<string, { default: string | undefined, help: string }>

export type SettingName = keyof typeof SETTINGS

/** `BLOG_PORT` → `blog-port`. */
export function flagName (setting: SettingName): string {
  return setting.toLowerCase().replaceAll('_', '-')
}

export function loadConfig (env: NodeJS.ProcessEnv, flags: Partial<Record<SettingName, string>> = {}): Config {
  const raw = (name: SettingName): string | undefined => {
    const value = flags[name] ?? env[name]
    return value === undefined || value === '' ? undefined : value
  }
  const read = <T>(name: SettingName, schema: z.ZodType<T>): T => {
    const result = schema.safeParse(raw(name) ?? SETTINGS[name].default)
    if (!result.success) throw new ConfigError(name, result.error.issues[0]?.message ?? 'invalid value')
    return result.data
  }

  const databaseUrl = raw('DATABASE_URL')
  const apiUrl = raw('API_URL')
  const adminPort = raw('ADMIN_PORT') === undefined ? undefined : read('ADMIN_PORT', port)
  return Object.freeze({
    store: parseStoreLocation(databaseUrl ?? DEFAULT_DATABASE_FILE),
    storeIsDefault: databaseUrl === undefined,
    apiUrls: apiUrl === undefined ? undefined : parseApiUrls(apiUrl),
    host: read('HOST', z.string().min(1)),
    blogPort: read('BLOG_PORT', port),
    postsPort: read('POSTS_PORT', port),
    upstreamTimeouts: {
      totalMs: read('UPSTREAM_TIMEOUT_MS', milliseconds(1)),
      connectMs: read('UPSTREAM_CONNECT_TIMEOUT_MS', milliseconds(1)),
      headersMs: read('UPSTREAM_HEADERS_TIMEOUT_MS', milliseconds(1)),
      bodyIdleMs: read('UPSTREAM_BODY_TIMEOUT_MS', milliseconds(1))
    },
    server: {
      timeouts: {
        headersMs: read('HEADERS_TIMEOUT_MS', milliseconds(1)),
        requestMs: read('REQUEST_TIMEOUT_MS', milliseconds(1)),
        keepAliveMs: read('KEEP_ALIVE_TIMEOUT_MS', milliseconds(1))
      },
      loadShedDelayMs: read('LOAD_SHED_DELAY_MS', milliseconds(0))
    },
    storeLimits: {
      poolSize: read('DB_POOL_SIZE', count(1, 1000)),
      connectTimeoutMs: read('DB_CONNECT_TIMEOUT_MS', milliseconds(1)),
      statementTimeoutMs: read('DB_STATEMENT_TIMEOUT_MS', milliseconds(1)),
      preparedStatements: read('DB_PREPARED_STATEMENTS', z.enum(['on', 'off'], { error: "expected 'on' or 'off'" })) === 'on'
    },
    upstreamHealth: {
      ejectFailures: read('UPSTREAM_EJECT_FAILURES', count(0, 1000)),
      probeIntervalMs: read('UPSTREAM_PROBE_INTERVAL_MS', milliseconds(10))
    },
    staleIfErrorS: read('STALE_IF_ERROR_S', count(0, 31_536_000)),
    shutdownTimeoutMs: read('SHUTDOWN_TIMEOUT_MS', milliseconds(1)),
    workers: read('WORKERS', z.union([z.literal('auto').transform(() => availableParallelism()), count(1, 256)],
      { error: "expected a whole number from 1 to 256, or 'auto'" })),
    logLevel: read('LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      { error: 'expected fatal, error, warn, info, debug, trace or silent' })),
    cacheControl: read('CACHE_CONTROL', z.string().regex(/^[\x20-\x7e]+$/, 'expected a header value of printable ASCII')),
    cacheMaxBytes: read('CACHE_MAX_MB', z.coerce.number({ error: 'expected megabytes' })
      .int('expected whole megabytes').min(0, 'expected 0 or more').max(65_536, 'expected at most 65536')) * 1024 * 1024,
    metricsEnabled: read('METRICS', z.enum(['on', 'off'], { error: "expected 'on' or 'off'" })) === 'on',
    adminPort,
    corsOrigins: read('CORS_ORIGIN', z.string().transform((value, ctx) => {
      if (value === '*') return '*' as const
      if (value === 'off') return []
      const origins = value.split(',').map((o) => o.trim())
      for (const origin of origins) {
        if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
          ctx.addIssue({ code: 'custom', message: `"${origin}" is not an origin like https://example.com` })
          return z.NEVER
        }
      }
      return origins
    })),
    slugPattern: read('SLUG_PATTERN', z.string().transform((source, ctx) => {
      if (source === DEFAULT_SLUG_PATTERN.source) return DEFAULT_SLUG_PATTERN
      try {
        return new RegExp(source)
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected a valid regular expression' })
        return z.NEVER
      }
    }))
  })
}

const SCHEME = /^([a-z][a-z0-9+.-]*):/i

/** A file path or `sqlite:` URL, `postgres(ql)://`, `mysql://` or `mariadb://`. */
export function parseStoreLocation (value: string): StoreLocation {
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase()
  if (scheme === undefined) return sqliteFile(value)
  switch (scheme) {
    case 'sqlite': {
      // sqlite:relative/path, sqlite:///absolute/path
      const rest = value.slice('sqlite:'.length)
      const filename = rest.startsWith('//') ? decodeURIComponent(new URL(value).pathname) : rest
      if (filename === '') throw new ConfigError('DATABASE_URL', 'the sqlite: URL names no file')
      return sqliteFile(filename)
    }
    case 'postgres':
    case 'postgresql':
      checkUrl(value)
      return { dialect: 'postgres', url: value }
    case 'mysql':
    case 'mariadb':
      checkUrl(value)
      return { dialect: 'mysql', url: value.replace(SCHEME, 'mysql:') }
    default:
      throw new ConfigError('DATABASE_URL', `unknown store scheme "${scheme}:" (use a file path, sqlite:, postgres://, mysql:// or mariadb://)`)
  }
}

/**
 * An in-memory database would be empty and private to its one connection: the post API opens
 * it read-only (nothing could ever be written to it) and streams lists on connections of their
 * own (which would each see another, empty database). Refused rather than served empty.
 */
function sqliteFile (filename: string): StoreLocation {
  if (filename === ':memory:') throw new ConfigError('DATABASE_URL', 'an in-memory SQLite database cannot serve posts (name a file)')
  return { dialect: 'sqlite', filename }
}

function checkUrl (value: string): void {
  if (!URL.canParse(value)) throw new ConfigError('DATABASE_URL', 'not a valid URL')
}

/** One or more base URLs, comma-separated; each keeps its own base path. */
function parseApiUrls (value: string): URL[] {
  const urls = value.split(',').map((entry, index) => {
    if (entry.trim() === '') throw new ConfigError('API_URL', `entry ${index + 1} of the comma-separated list is empty`)
    return parseApiUrl(entry.trim())
  })
  const seen = new Set<string>()
  for (const url of urls) {
    if (seen.has(url.href)) throw new ConfigError('API_URL', `"${url.href}" is listed twice`)
    seen.add(url.href)
  }
  return urls
}

function parseApiUrl (value: string): URL {
  if (!URL.canParse(value)) throw new ConfigError('API_URL', `"${value}" is not a URL`)
  const url = new URL(value)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('API_URL', 'expected an http:// or https:// URL')
  if (url.search !== '' || url.hash !== '') throw new ConfigError('API_URL', 'expected a base URL without query or fragment')
  if (url.username !== '' || url.password !== '') throw new ConfigError('API_URL', 'credentials in the URL are not supported')
  return url
}

/** A store URL safe to print: the password replaced. */
export function describeStore (store: StoreLocation): string {
  if (store.dialect === 'sqlite') return `sqlite:${store.filename}`
  const url = new URL(store.url)
  if (url.password !== '') url.password = '***'
  return url.href
}
