// From the settings to each tier's options: the one mapping the executable and the tests share,
// so that a tier under test is configured as the process configures it. What the process opens
// itself (the store, the upstream client, the logger, its operations) comes in as `parts`.
import { BODY_LIMITS } from '../contract/body-limits.js'
import type { Config } from '../config.js'
import type { FrontAppOptions } from '../front/app.js'
import type { UpstreamClientOptions } from '../front/upstream/client.js'
import type { PostsAppOptions } from '../posts-api/app.js'
import type { SyncSettings } from '../posts-api/posts-sync-wiring.js'
import { ConfigError } from '../config.js'

/** The front's upstream client (openUpstreamClient), but for its base URLs and logger. */
export function upstreamClientOptions (config: Config): Pick<UpstreamClientOptions, 'timeouts' | 'health'> {
  return { timeouts: config.upstreamTimeouts, health: config.upstreamHealth }
}

/** What the front takes from the settings. */
type FrontSettings = 'slugPattern' | 'cacheControl' | 'cacheMaxBytes' | 'cacheDiskMaxBytes' | 'staleIfErrorS' | 'corsOrigins' | 'feeds' | 'cacheTagHeaders' | 'server' | keyof typeof BODY_LIMITS

export function frontAppOptions (config: Config, parts: Omit<FrontAppOptions, FrontSettings>): FrontAppOptions {
  const { slugPattern, cacheControl, cacheMaxBytes, cacheDiskMaxBytes, staleIfErrorS, corsOrigins, feeds, cacheTagHeaders, server } = config
  return { slugPattern, cacheControl, cacheMaxBytes, cacheDiskMaxBytes, staleIfErrorS, corsOrigins, feeds, cacheTagHeaders, server, ...BODY_LIMITS, ...parts }
}

/**
 * What the post API takes from the settings. STORE_CONCURRENCY bounds reads that wait on a
 * database server; SQLite's run on the event loop, one at a time, where a turn would only refuse
 * pipelined requests the loop serves in order anyway (its lag sheds load: LOAD_SHED_DELAY_MS).
 */
export function postsAppOptions (config: Config, parts: Omit<PostsAppOptions, 'cacheControl' | 'server' | 'storeConcurrency' | 'previewSecret' | 'markdownColumns' | 'cacheTagHeaders' | 'search' | 'sync'>): PostsAppOptions {
  const storeConcurrency = config.store.dialect === 'sqlite' ? undefined : config.storeConcurrency
  const { cacheControl, server, previewSecret, markdownColumns, cacheTagHeaders, search } = config
  return { cacheControl, server, storeConcurrency, previewSecret, markdownColumns, cacheTagHeaders, search, sync: syncSettings(config), ...parts }
}

/** Webhooks are signed: URLs without a secret are refused at start-up, naming the setting. */
function syncSettings ({ sync: { pollMs, webhookUrls, webhookKey } }: Config): SyncSettings {
  if (webhookUrls.length === 0) return { pollMs }
  if (webhookKey === undefined) throw new ConfigError('WEBHOOK_SECRET', 'WEBHOOK_URLS is set, and webhooks are signed with this key')
  return { pollMs, webhooks: { urls: webhookUrls.map((url) => url.href), keys: [webhookKey] } }
}
