// The post API's metrics: store queries timed by kind, store errors by kind, bodies built or
// reused, and the store pool's connections. The store is measured from outside (a PostStore that
// times the one it wraps), so every dialect is measured alike and none of them knows about it.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { StoreQueryError, StoreUnavailableError, type PostStore } from '../store/store.js'
import { LATENCY_BUCKETS_S, METRIC_PREFIX, registerScrapedGauge } from './metrics.js'

/** The store reads the post API makes; `token` is the change-token read that precedes each answer. */
export type QueryKind = 'token' | 'post' | 'neighbours' | 'list' | 'page' | 'count' | 'probe'

/** Bodies the post API serves: built from the store for this request, or built earlier under the same change token. */
export type BodyKind = 'post' | 'list'

export interface PostsMetrics {
  /** `store`, its reads timed and their failures counted. */
  readonly store: PostStore
  /** One body a request gets: `built` from the store for it, or reused. */
  body: (kind: BodyKind, built: boolean) => void
}

export function createPostsMetrics (registry: Registry, store: PostStore): PostsMetrics {
  const querySeconds = new Histogram({
    name: `${METRIC_PREFIX}store_query_duration_seconds`,
    help: 'Store reads (its _count: reads) by kind: token (the change-token read before each answer), post, neighbours (the neighbour links of a post, on a store without versions), list (until its last row, so a streamed list goes at its client\'s pace), page, count (a list\'s X-Total-Count), probe (readiness)',
    labelNames: ['kind'] as const,
    buckets: LATENCY_BUCKETS_S,
    registers: [registry]
  })
  const errors = new Counter({
    name: `${METRIC_PREFIX}store_errors_total`,
    help: 'Store reads that failed, by kind of read and of error: unavailable (an outage: 503) or internal (anything else: 500)',
    labelNames: ['kind', 'error'] as const,
    registers: [registry]
  })
  const bodies = new Counter({
    name: `${METRIC_PREFIX}post_bodies_total`,
    help: 'Bodies requests got, by kind: built from the store for the request, or reused (built under the same change token)',
    labelNames: ['kind', 'result'] as const,
    registers: [registry]
  })
  if (store.poolStats?.() !== undefined) registerPoolGauges(registry, store)

  // Children made once: a read or a request only looks them up.
  const timers: Record<QueryKind, { observe: (seconds: number) => void }> = {
    token: querySeconds.labels({ kind: 'token' }),
    post: querySeconds.labels({ kind: 'post' }),
    neighbours: querySeconds.labels({ kind: 'neighbours' }),
    list: querySeconds.labels({ kind: 'list' }),
    page: querySeconds.labels({ kind: 'page' }),
    count: querySeconds.labels({ kind: 'count' }),
    probe: querySeconds.labels({ kind: 'probe' })
  }
  const bodyCounters = {
    post: { built: bodies.labels({ kind: 'post', result: 'built' }), reused: bodies.labels({ kind: 'post', result: 'reused' }) },
    list: { built: bodies.labels({ kind: 'list', result: 'built' }), reused: bodies.labels({ kind: 'list', result: 'reused' }) }
  }

  function failed (kind: QueryKind, err: unknown): void {
    // A query the table cannot answer (an unknown field, no tags) is the client's mistake (400), not the store's.
    if (err instanceof StoreQueryError) return
    errors.labels({ kind, error: err instanceof StoreUnavailableError ? 'unavailable' : 'internal' }).inc()
  }

  // Promise callbacks rather than async functions: a store read per request (the change token)
  // gets one promise more, not two functions' worth.
  function timed<T> (kind: QueryKind, read: Promise<T>): Promise<T> {
    const started = performance.now()
    return read.then((value) => {
      timers[kind].observe((performance.now() - started) / 1000)
      return value
    }, (err: unknown) => {
      timers[kind].observe((performance.now() - started) / 1000)
      failed(kind, err)
      throw err
    })
  }

  async function * timedRows<T> (kind: QueryKind, rows: () => AsyncIterable<T>): AsyncIterable<T> {
    const started = performance.now()
    try {
      yield * rows()
    } catch (err) {
      failed(kind, err)
      throw err
    } finally {
      timers[kind].observe((performance.now() - started) / 1000)
    }
  }

  const readNeighbours = store.readNeighbours?.bind(store)
  const measured: PostStore = {
    get dialect () { return store.dialect },
    get tracksChanges () { return store.tracksChanges },
    get columns () { return store.columns },
    // A store without change tracking answers without a query: nothing to time.
    readChangeToken: () => store.tracksChanges ? timed('token', store.readChangeToken()) : store.readChangeToken(),
    findPostBySlug: (slug, query) => timed('post', store.findPostBySlug(slug, query)),
    ...(readNeighbours === undefined ? {} : { readNeighbours: async (slug: string) => await timed('neighbours', readNeighbours(slug)) }),
    streamPosts: (query) => timedRows('list', () => store.streamPosts(query)),
    streamKeyedPosts: (query) => timedRows('list', () => store.streamKeyedPosts(query)),
    readPage: (query) => timed('page', store.readPage(query)),
    readRowVersions: () => store.readRowVersions(),
    streamVersionedPosts: (query) => timedRows('list', () => store.streamVersionedPosts(query)),
    findVersionedPostsBySlugs: (slugs, query) => timed('page', store.findVersionedPostsBySlugs(slugs, query)),
    countPosts: (filter) => timed('count', store.countPosts(filter)),
    checkQuery: (query) => store.checkQuery(query),
    probe: () => timed('probe', store.probe()),
    poolStats: () => store.poolStats?.(),
    findPostsBySlugs: store.findPostsBySlugs === undefined ? undefined : (slugs, query) => timed('page', store.findPostsBySlugs!(slugs, query)),
    // A search's ranked list is a list read.
    openSearchIndex: store.openSearchIndex === undefined
      ? undefined
      : async (settings) => {
        const search = await store.openSearchIndex!(settings)
        return search === undefined ? undefined : { name: search.name, rankMatches: (query, filter) => timed('list', search.rankMatches(query, filter)) }
      },
    migrate: async (options) => await store.migrate(options),
    seed: async () => await store.seed(),
    checkSchema: async () => await store.checkSchema(),
    upsertPosts: async (posts, options) => await store.upsertPosts(posts, options),
    close: async () => await store.close()
  }
  return {
    store: measured,
    body: (kind, built) => (built ? bodyCounters[kind].built : bodyCounters[kind].reused).inc()
  }
}

/** Read at each scrape: nothing is counted per request. */
function registerPoolGauges (registry: Registry, store: PostStore): void {
  const stats = (): ReturnType<NonNullable<PostStore['poolStats']>> => store.poolStats?.()
  registry.registerMetric(new Gauge({
    name: `${METRIC_PREFIX}store_pool_connections`,
    help: 'Connections of the store pool (PostgreSQL, MySQL/MariaDB) by state: in_use or idle',
    labelNames: ['state'] as const,
    registers: [],
    collect () {
      const now = stats()
      if (now === undefined) return
      this.labels({ state: 'in_use' }).set(now.total - now.idle)
      this.labels({ state: 'idle' }).set(now.idle)
    }
  }))
  registerScrapedGauge(registry, 'store_pool_waiting', 'Store reads waiting for a pool connection', () => stats()?.waiting)
}
