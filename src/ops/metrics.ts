// A process's Prometheus metrics: one prom-client registry for all the tiers
// the process runs, with Node's process defaults, the requests of each tier, and what each tier
// adds (src/ops/front-metrics.ts, src/ops/store-metrics.ts). Scraped as text at GET /metrics; with
// several workers, a scrape gets the sum of all of them (src/ops/cluster-metrics.ts).
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import { createRequestHistogram, type Series } from './request-histogram.js'

/** Every metric of ours starts with this; Node's process defaults keep their usual names. */
export const METRIC_PREFIX = 'blog_read_api_'

/**
 * Latency buckets in seconds: from a cached answer on loopback (under a millisecond) to the
 * front's whole upstream budget (10 s by default).
 */
export const LATENCY_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The route label of requests no route matched (404s, and paths the router refused): bounded. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * A gauge without labels that `read` gives at each scrape (`METRIC_PREFIX` + `name`): nothing is
 * counted per request. Left as it was when `read` has no value.
 */
export function registerScrapedGauge (registry: Registry, name: string, help: string, read: () => number | undefined): void {
  registry.registerMetric(new Gauge({
    name: `${METRIC_PREFIX}${name}`,
    help,
    registers: [],
    collect () {
      const value = read()
      if (value !== undefined) this.set(value)
    }
  }))
}

export interface ProcessMetrics {
  readonly registry: Registry
  /** The request metrics of one tier (`front`, `posts-api`, `admin`). */
  requests: (tier: string) => RequestMetrics
  /** The exposition a scrape gets: this process's metrics, or with workers, all of theirs. */
  scrape: () => Promise<string>
  /** Its media type (Prometheus text format 0.0.4). */
  readonly contentType: string
}

export interface RequestMetrics {
  /** One answered request: its route pattern (undefined: none matched), method, status and time. */
  observe: (route: string | undefined, method: string, status: number, elapsedMs: number) => void
}

export function createProcessMetrics (): ProcessMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requestSeconds = createRequestHistogram(registry, `${METRIC_PREFIX}http_request_duration_seconds`,
    'Requests answered by the HTTP routes (its _count: requests), by tier, route pattern, method and status; probes and scrapes are not counted',
    LATENCY_BUCKETS_S)

  function requests (tier: string): RequestMetrics {
    // Each label combination's series is made once, so a request only walks these maps. Routes,
    // methods (those Node parses) and statuses are bounded sets, so are the maps.
    const byRoute = new Map<string, Map<string, Map<number, Series>>>()
    return {
      observe (route = UNMATCHED_ROUTE, method, status, elapsedMs) {
        let byMethod = byRoute.get(route)
        if (byMethod === undefined) byRoute.set(route, byMethod = new Map())
        let byStatus = byMethod.get(method)
        if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
        let series = byStatus.get(status)
        if (series === undefined) byStatus.set(status, series = requestSeconds.series({ tier, route, method, status: String(status) }))
        requestSeconds.observe(series, elapsedMs / 1000)
      }
    }
  }

  return {
    registry,
    requests,
    scrape: async () => await registry.metrics(),
    contentType: registry.contentType
  }
}
