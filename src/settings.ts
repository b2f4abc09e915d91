// Every setting, once: its environment variable (the key), its flag (the key in kebab case), the
// text its value takes, its default, its help (one line for `--help`; `doc` adds Markdown for
// docs/configuration.md, which is generated from this table), its schema, and the commands that
// read it. To add a setting: add an entry here (or in one of the parts this table takes in:
// process/content-settings.ts, front-cache-settings.ts, sync-settings.ts), then read it in
// loadConfig (config.ts).
import type { z } from 'zod'
import { FRONT, POSTS, SERVING, STORE, type CommandName, type Setting } from './process/setting-shape.js'
import { CONTENT_SETTINGS } from './process/content-settings.js'
import { FRONT_CACHE_SETTINGS } from './process/front-cache-settings.js'
import { SYNC_SETTINGS } from './process/sync-settings.js'
import { DEFAULT_SLUG_PATTERN, SLUG_MAX_LENGTH } from './contract/slug.js'
import {
  baseUrls, corsOrigins, count, headerNames, headerValue, logLevel, milliseconds, onOff, port, processCount,
  regularExpression, secret, storeLocation, text, trueFalse
} from './process/setting-values.js'

export { COMMAND_NAMES, type CommandName, type Setting } from './process/setting-shape.js'

export const SETTINGS = {
  DATABASE_URL: {
    value: 'URL',
    default: './data/blog.db',
    help: 'the store: a SQLite file path or sqlite: URL, postgres://, mysql:// or mariadb://',
    doc: 'The store: a SQLite file path or `sqlite:` URL, `postgres://`, `mysql://` or `mariadb://` (see [Store URLs](operations.md#store-urls)). Only the default file, when it does not exist, is created, migrated and seeded by `serve` and `posts-api`; a file you name must exist (`blog-read-api migrate` creates it).',
    schema: storeLocation,
    readBy: STORE
  },
  API_URL: {
    value: 'URLS',
    default: undefined,
    unset: '`serve` calls its own post API',
    help: 'base URLs of the upstream post APIs, comma-separated (front); `serve` uses its own post API when unset',
    doc: 'Front: base URL of the upstream post API, or several, comma-separated (`http://h1:3001,http://h2:3001`); calls are spread over them (see [Several upstreams](operations.md#several-upstreams)). Each may carry its own base path (`http://h:3001/blog-backend`). Needed by `front`; `serve` calls its own post API when unset.',
    schema: baseUrls.optional(),
    readBy: FRONT
  },
  HOST: {
    value: 'ADDRESS',
    default: '127.0.0.1',
    help: 'interface the tiers (and the admin listener) listen on',
    schema: text,
    readBy: [...SERVING, 'preview-url']
  },
  BLOG_PORT: {
    value: 'PORT',
    default: '3000',
    help: 'front API port (0: any free port)',
    schema: port,
    readBy: [...FRONT, 'preview-url']
  },
  POSTS_PORT: {
    value: 'PORT',
    default: '3001',
    help: 'post API port (0: any free port)',
    schema: port,
    readBy: POSTS
  },
  LOG_LEVEL: {
    value: 'LEVEL',
    default: 'info',
    help: 'fatal, error, warn, info (one access line per request), debug, trace or silent',
    doc: '`fatal`, `error`, `warn`, `info` (one access line per request), `debug`, `trace` or `silent`.',
    schema: logLevel,
    readBy: [...SERVING, 'migrate', 'seed']
  },
  SLUG_PATTERN: {
    value: 'REGEXP',
    default: DEFAULT_SLUG_PATTERN.source,
    help: `regular expression a slug must match at the front and on import (anchored; at most ${SLUG_MAX_LENGTH} characters)`,
    doc: `Regular expression a slug must match at the front (and on import). It is anchored for you; the ${SLUG_MAX_LENGTH}-character bound stays, and \`.\`/\`..\` are always refused.`,
    schema: regularExpression,
    // The post API counts, at start-up, the rows whose slug the front would refuse; preview-url refuses them too.
    readBy: [...SERVING, 'import', 'preview-url']
  },
  PUBLISHED_ONLY: {
    value: 'true|false',
    default: 'false',
    help: 'post API: hide drafts, scheduled, unpublished and deleted rows from every public read (false: every row is public)',
    doc: 'Post API: `true` hides, on every public read, each row that the table\'s `published_at`, `draft`, `published`, `status` or `deleted_at` columns say is not published now; a scheduled post appears when its `published_at` passes, with no write. `false` serves every row, and the start-up log says how many rows `true` would hide. See [Publishing rules](api.md#publishing-rules).',
    schema: trueFalse,
    readBy: POSTS
  },
  PREVIEW_SECRET: {
    value: 'SECRET',
    default: undefined,
    unset: '`?preview=` is a 400',
    help: 'post API: key of preview links (at least 32 characters; `preview-url` mints them); unset: ?preview= is a 400',
    doc: 'Post API, and the `preview-url` command: the key (at least 32 characters) of preview links, which show one post whether published or not until they expire, with `Cache-Control: private, no-store`. Unset, `?preview=` is a 400. See [Publishing rules](api.md#publishing-rules).',
    schema: secret.optional(),
    readBy: [...POSTS, 'preview-url']
  },
  CACHE_CONTROL: {
    value: 'VALUE',
    default: 'no-cache',
    help: 'Cache-Control of successful answers, both tiers (no-cache: caches revalidate, cheaply, by ETag)',
    doc: '`Cache-Control` of successful answers, both tiers. The default lets browsers and shared caches keep a copy but revalidate it (cheaply, by ETag) on every use, so nobody serves a post longer than you allowed.',
    schema: headerValue,
    readBy: SERVING
  },
  // What the front holds of upstream answers.
  ...FRONT_CACHE_SETTINGS,
  CORS_ORIGIN: {
    value: 'ORIGINS',
    default: '*',
    help: "front: origins allowed to read cross-origin: '*', a comma-separated list of origins, or 'off'",
    doc: 'Front: origins allowed to read cross-origin: `*`, a comma-separated list (`https://a.example,https://b.example`), or `off`. Never with credentials.',
    schema: corsOrigins,
    readBy: FRONT
  },
  CACHE_TAG_HEADERS: {
    value: 'HEADERS',
    default: 'Surrogate-Key,Cache-Tag',
    empty: 'off',
    help: "both tiers: headers in which every answer names its cache tags, comma-separated ('off' or empty: none)",
    doc: 'Both tiers: the response headers, comma-separated, in which every answer names what it depends on (`post-SLUG`, `posts`, `tag-T`), so that a CDN purges exactly what a change touched: `Surrogate-Key` (Fastly; keys separated by spaces) and `Cache-Tag` (Cloudflare; by commas). `off` or empty: none, at no cost. See [Cache tags](api.md#cache-tags).',
    schema: headerNames,
    readBy: SERVING
  },
  UPSTREAM_TIMEOUT_MS: {
    value: 'MS',
    default: '10000',
    help: 'front: the whole budget of one upstream call, retry included (then 504)',
    doc: 'Front: the whole budget of one upstream call, retry included; then 504. Below the 15 s outer proxies commonly allow.',
    schema: milliseconds(1),
    readBy: FRONT
  },
  UPSTREAM_CONNECT_TIMEOUT_MS: {
    value: 'MS',
    default: '2000',
    help: 'front: connecting to the upstream',
    schema: milliseconds(1),
    readBy: FRONT
  },
  UPSTREAM_HEADERS_TIMEOUT_MS: {
    value: 'MS',
    default: '5000',
    help: "front: from sending the request to the upstream's response headers",
    schema: milliseconds(1),
    readBy: FRONT
  },
  UPSTREAM_BODY_TIMEOUT_MS: {
    value: 'MS',
    default: '5000',
    help: "front: longest silence inside the upstream's response body",
    schema: milliseconds(1),
    readBy: FRONT
  },
  UPSTREAM_EJECT_FAILURES: {
    value: 'N',
    default: '3',
    help: 'front: calls in a row an upstream refused, broke or let time out before it leaves rotation (0: never)',
    doc: 'Front: calls in a row that an upstream refused, broke or let time out (or answered 503 while shutting down) before it is taken out of rotation and probed (`0`: never). Applies to a lone upstream too.',
    schema: count(0, 1000),
    readBy: FRONT
  },
  UPSTREAM_PROBE_INTERVAL_MS: {
    value: 'MS',
    default: '250',
    help: 'front: pause between probes (GET /readyz) of an upstream out of rotation',
    doc: 'Front: pause between two probes (`GET /readyz`) of an upstream out of rotation; the first probe it answers brings it back.',
    schema: milliseconds(10),
    readBy: FRONT
  },
  STALE_IF_ERROR_S: {
    value: 'S',
    default: '0',
    help: 'front: serve its last good copy, flagged with Cache-Status, for this many seconds when the upstream fails (0: never)',
    doc: 'Front: when the upstream fails (502/503/504), serve the last good copy if it was confirmed at most this many seconds ago, flagged with `Cache-Status` (`0`: never).',
    schema: count(0, 31_536_000),
    readBy: FRONT
  },
  HEADERS_TIMEOUT_MS: {
    value: 'MS',
    default: '10000',
    help: 'both tiers: a client must send its request headers within this (then 408)',
    doc: 'Both tiers: a client must send its request headers within this (slowloris); then 408.',
    schema: milliseconds(1),
    readBy: SERVING
  },
  REQUEST_TIMEOUT_MS: {
    value: 'MS',
    default: '30000',
    help: 'both tiers: a client must send its whole request within this',
    schema: milliseconds(1),
    readBy: SERVING
  },
  KEEP_ALIVE_TIMEOUT_MS: {
    value: 'MS',
    default: '72000',
    help: "both tiers: idle keep-alive connections close after this (keep it above your load balancer's)",
    doc: "Both tiers: idle keep-alive connections close after this. Keep it above your load balancer's idle time-out (AWS ALB: 60 s), so the balancer never reuses a connection we just closed.",
    schema: milliseconds(1),
    readBy: SERVING
  },
  LOAD_SHED_DELAY_MS: {
    value: 'MS',
    default: '1000',
    help: 'both tiers: event-loop delay beyond which requests get 503 + Retry-After at once (0: never)',
    doc: 'Both tiers: when the event loop lags more than this, requests get 503 + `Retry-After` at once instead of queueing without bound (`0`: never).',
    schema: milliseconds(0),
    readBy: SERVING
  },
  SHUTDOWN_TIMEOUT_MS: {
    value: 'MS',
    default: '10000',
    help: 'on SIGTERM/SIGINT: longest wait for requests in flight before exiting anyway (exit 1)',
    schema: milliseconds(1),
    readBy: SERVING
  },
  WORKERS: {
    value: 'N',
    default: '1',
    help: "processes sharing the ports, 1 to 256, or 'auto' for one per core (1: no cluster)",
    doc: 'Processes sharing the ports, 1 to 256, or `auto` (one per core); 1 runs no cluster. See [Scale](operations.md#scale). Pools are per process: `DB_POOL_SIZE` connections per post API worker.',
    schema: processCount,
    readBy: SERVING
  },
  METRICS: {
    value: 'on|off',
    default: 'on',
    help: "'on' keeps Prometheus metrics, served at GET /metrics; 'off' keeps none and answers no /metrics",
    doc: 'Both tiers: `on` keeps Prometheus metrics and answers `GET /metrics`; `off` keeps none (no per-request work) and answers no `/metrics`. See [Probes and metrics](operations.md#probes-and-metrics).',
    schema: onOff,
    readBy: SERVING
  },
  ADMIN_PORT: {
    value: 'PORT',
    default: undefined,
    unset: "/metrics is on each tier's port",
    help: "a listener of its own (on HOST) for the process's /metrics, /healthz and /readyz",
    doc: "A listener of its own on `HOST:ADMIN_PORT`, one per process, answering `/metrics` (all the process's tiers) and `/healthz`, `/readyz` (all of them together); `/metrics` then leaves the tiers' ports, their probes stay. See [Probes and metrics](operations.md#probes-and-metrics).",
    schema: port.optional(),
    readBy: SERVING
  },
  DB_POOL_SIZE: {
    value: 'N',
    default: '10',
    help: 'PostgreSQL/MySQL connections (per process)',
    schema: count(1, 1000),
    readBy: STORE
  },
  DB_CONNECT_TIMEOUT_MS: {
    value: 'MS',
    default: '3000',
    help: 'wait for a store connection (then 503)',
    schema: milliseconds(1),
    readBy: STORE
  },
  DB_PREPARED_STATEMENTS: {
    value: 'on|off',
    default: 'off',
    help: "PostgreSQL: 'on' prepares the change-token query once per connection; never behind a transaction pooler such as PgBouncer",
    doc: 'PostgreSQL: `on` prepares the change-token query once per connection and makes the statement time-out a connection parameter: one round trip instead of three per post read, and the change-token query\'s text is not sent each time. Only for a direct connection: behind PgBouncer (which refuses the connection parameter in any mode, so the post API stops at start-up) or any transaction pooler, leave it `off`. See [PostgreSQL behind PgBouncer, and on replicas](operations.md#postgresql-behind-pgbouncer-and-on-replicas).',
    schema: onOff,
    readBy: STORE
  },
  DB_STATEMENT_TIMEOUT_MS: {
    value: 'MS',
    default: '5000',
    help: 'longest store statement (then 503)',
    doc: 'Longest statement (PostgreSQL `statement_timeout`, set per transaction; MariaDB `max_statement_time`, MySQL `max_execution_time`); then 503. On PostgreSQL, a query without any answer within `DB_CONNECT_TIMEOUT_MS` + `DB_STATEMENT_TIMEOUT_MS` (waiting in a pooler\'s queue, say) is abandoned and its connection closed; then 503 too.',
    schema: milliseconds(1),
    readBy: STORE
  },
  STORE_CONCURRENCY: {
    value: 'N',
    default: '10',
    help: 'post API on PostgreSQL or MySQL: store reads that build answers at once, per process; the next wait up to 1 s (at most 4 per read), then 503',
    doc: 'Post API on PostgreSQL or MySQL/MariaDB (SQLite reads run one at a time on the event loop, which `LOAD_SHED_DELAY_MS` bounds): store reads that build answers (no held answer serves them), at once per process. The next ones wait their turn, at most 4 × `STORE_CONCURRENCY` of them and each for at most 1 s, then are answered 503 `overloaded` with `Retry-After: 1`. Answers held already, and the change-token reads the fronts confirm their copies with, never wait. See "Bounded work" in [the API reference](api.md#bounded-work).',
    schema: count(1, 1000),
    readBy: POSTS
  },
  // What the front makes of the posts: rendered Markdown, feeds and the sitemap.
  ...CONTENT_SETTINGS,
  ...SYNC_SETTINGS
} as const satisfies Record<string, Setting>

export type SettingName = keyof typeof SETTINGS
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[]

/** The value a setting gives the process: its schema's output. */
export type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]['schema']>

/** `BLOG_PORT` → `blog-port`. */
export function flagName (setting: SettingName): string {
  return setting.toLowerCase().replaceAll('_', '-')
}

/** The settings `command` reads, in the table's order. */
export function settingsReadBy (command: CommandName): SettingName[] {
  return SETTING_NAMES.filter((name) => (SETTINGS[name].readBy as readonly CommandName[]).includes(command))
}
