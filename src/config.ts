// The only reader of settings: environment variables, overridden by CLI flags of the same name
// (`BLOG_PORT` ↔ `--blog-port`), each checked by its schema in the settings table (settings.ts)
// and assembled here into the process's Config. A bad value stops start-up with one line naming
// the setting.
import { SETTING_NAMES, SETTINGS, type Setting, type SettingName, type SettingValue } from './settings.js'
import type { StoreLocation } from './process/setting-values.js'
import { createPostUrl, type PostUrl } from './feeds/post-url.js'
import type { SearchSettings } from './search/compiled-search.js'

export type { StoreLocation } from './process/setting-values.js'
export type { SettingName } from './settings.js'

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
  /** Store reads building answers at once, per post API process (src/posts-api/store-gate.ts). */
  readonly storeConcurrency: number
  /** The Markdown columns (MARKDOWN_COLUMNS); undefined: `content` when the table has it. */
  readonly markdownColumns: readonly string[] | undefined
  /** What `q` searches, and in which language (SEARCH_COLUMNS, SEARCH_LANGUAGE). */
  readonly search: SearchSettings
  /** Feeds and sitemap (SITE_URL, POST_URL_TEMPLATE, FEED_SIZE). */
  readonly feeds: FeedSettings
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
  /** Post API: public reads apply the publishing rule (src/publishing/publishing-rule.ts). */
  readonly publishedOnly: boolean
  /** Post API: the key of preview links (undefined: `?preview=` is a 400). */
  readonly previewSecret: string | undefined
  /** Post API: sync polling (SYNC_POLL_MS) and webhooks (WEBHOOK_URLS, the key of WEBHOOK_SECRET). */
  readonly sync: { pollMs: number, webhookUrls: readonly URL[], webhookKey: Buffer | undefined }
  /** Bytes of upstream bodies the front keeps for revalidation. */
  readonly cacheMaxBytes: number
  /** Bytes of files the front keeps lists too large for memory in. */
  readonly cacheDiskMaxBytes: number
  /** Origins the front allows cross-origin reads from: '*' (any), a list, or none ([]). */
  readonly corsOrigins: '*' | string[]
  /** The headers in which both tiers name each answer's cache tags (none: []). */
  readonly cacheTagHeaders: readonly string[]
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

/** What both tiers' HTTP servers take from the settings (src/http/app.ts). */
export interface ServerOptions {
  timeouts: ServerTimeouts
  /** Event-loop delay beyond which requests are shed with 503 + Retry-After (0: never). */
  loadShedDelayMs: number
}

export interface FeedSettings {
  /** Undefined: SITE_URL unset, the feeds and sitemap answer 404. */
  site: { url: URL, postUrl: PostUrl } | undefined
  /** The template, as given. */
  postUrlTemplate: string
  feedSize: number
}

export class ConfigError extends Error {
  constructor (readonly setting: string, readonly reason: string) {
    super(`invalid ${setting}: ${reason}`)
    this.name = 'ConfigError'
  }
}

/** Settings by name, as text (flags, or the environment); '' counts as unset. */
export type SettingTexts = Partial<Record<SettingName, string>>

/** The value of setting `name` from `text` (or its default when undefined); a ConfigError when the text is refused. */
export function parseSetting<N extends SettingName> (name: N, text: string | undefined): SettingValue<N> {
  const result = SETTINGS[name].schema.safeParse(text ?? SETTINGS[name].default)
  if (!result.success) throw new ConfigError(name, result.error.issues[0]?.message ?? 'invalid value')
  return result.data as SettingValue<N>
}

export function loadConfig (env: NodeJS.ProcessEnv, flags: SettingTexts = {}): Config {
  const given = (name: SettingName): string | undefined => {
    const value = flags[name] ?? env[name]
    const setting: Setting = SETTINGS[name]
    return value === '' ? setting.empty : value
  }
  // Every setting is checked, in the table's order, whichever the command reads.
  const value = Object.fromEntries(SETTING_NAMES.map((name) => [name, parseSetting(name, given(name))])) as { [N in SettingName]: SettingValue<N> }
  return Object.freeze({
    store: value.DATABASE_URL,
    storeIsDefault: given('DATABASE_URL') === undefined,
    apiUrls: value.API_URL,
    host: value.HOST,
    blogPort: value.BLOG_PORT,
    postsPort: value.POSTS_PORT,
    upstreamTimeouts: {
      totalMs: value.UPSTREAM_TIMEOUT_MS,
      connectMs: value.UPSTREAM_CONNECT_TIMEOUT_MS,
      headersMs: value.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyIdleMs: value.UPSTREAM_BODY_TIMEOUT_MS
    },
    server: {
      timeouts: { headersMs: value.HEADERS_TIMEOUT_MS, requestMs: value.REQUEST_TIMEOUT_MS, keepAliveMs: value.KEEP_ALIVE_TIMEOUT_MS },
      loadShedDelayMs: value.LOAD_SHED_DELAY_MS
    },
    storeLimits: {
      poolSize: value.DB_POOL_SIZE,
      connectTimeoutMs: value.DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: value.DB_STATEMENT_TIMEOUT_MS,
      preparedStatements: value.DB_PREPARED_STATEMENTS
    },
    storeConcurrency: value.STORE_CONCURRENCY,
    markdownColumns: value.MARKDOWN_COLUMNS,
    search: { columns: value.SEARCH_COLUMNS, language: value.SEARCH_LANGUAGE },
    feeds: feedSettings(value.SITE_URL, value.POST_URL_TEMPLATE, value.FEED_SIZE),
    upstreamHealth: { ejectFailures: value.UPSTREAM_EJECT_FAILURES, probeIntervalMs: value.UPSTREAM_PROBE_INTERVAL_MS },
    staleIfErrorS: value.STALE_IF_ERROR_S,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
    workers: value.WORKERS,
    logLevel: value.LOG_LEVEL,
    slugPattern: value.SLUG_PATTERN,
    cacheControl: value.CACHE_CONTROL,
    publishedOnly: value.PUBLISHED_ONLY,
    previewSecret: value.PREVIEW_SECRET,
    sync: { pollMs: value.SYNC_POLL_MS, webhookUrls: value.WEBHOOK_URLS ?? [], webhookKey: value.WEBHOOK_SECRET },
    cacheMaxBytes: value.CACHE_MAX_MB * 1024 * 1024,
    cacheDiskMaxBytes: value.CACHE_DISK_MAX_MB * 1024 * 1024,
    corsOrigins: value.CORS_ORIGIN,
    cacheTagHeaders: value.CACHE_TAG_HEADERS,
    metricsEnabled: value.METRICS,
    adminPort: value.ADMIN_PORT
  })
}

function feedSettings (url: URL | undefined, postUrlTemplate: string, feedSize: number): FeedSettings {
  if (url === undefined) return { site: undefined, postUrlTemplate, feedSize }
  try {
    return { site: { url, postUrl: createPostUrl(url, postUrlTemplate) }, postUrlTemplate, feedSize }
  } catch (err) {
    throw new ConfigError('POST_URL_TEMPLATE', (err as Error).message)
  }
}

/** A file path or `sqlite:` URL, `postgres(ql)://`, `mysql://` or `mariadb://`, as DATABASE_URL takes it. */
export function parseStoreLocation (value: string): StoreLocation {
  return parseSetting('DATABASE_URL', value)
}

/** A store URL safe to print: the password replaced. */
export function describeStore (store: StoreLocation): string {
  if (store.dialect === 'sqlite') return `sqlite:${store.filename}`
  const url = new URL(store.url)
  if (url.password !== '') url.password = '***'
  return url.href
}
