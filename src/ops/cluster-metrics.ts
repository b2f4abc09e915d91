// With several workers (WORKERS > 1), one scrape covers them all: whichever worker a scrape
// reaches asks the cluster primary, which gathers every worker's metrics and sums them with
// prom-client's AggregatorRegistry (counters and histograms add up; process gauges per their
// own aggregator). The primary serves nothing itself: it only answers its workers.
import cluster from 'node:cluster'
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client'
import type { ProcessMetrics } from './metrics.js'

/** What a worker asks the primary, and what it answers, over the cluster's IPC channel. */
type MetricsMessage =
  | { type: 'blog-read-api:metrics-request', id: number }
  | { type: 'blog-read-api:metrics', id: number, text?: string, error?: string }

/** prom-client's primary gives up on a silent worker after 5 s; a worker waits for its answer a little longer. */
const SCRAPE_TIMEOUT_MS = 6000

let aggregator: AggregatorRegistry<PrometheusContentType> | undefined

/**
 * In a worker, `metrics` as the cluster sees them: its registry offered to the primary, and a
 * scrape that returns the sum over every worker. Elsewhere, `metrics` unchanged.
 */
export function clusterWide (metrics: ProcessMetrics): ProcessMetrics {
  const worker = cluster.worker
  if (worker === undefined) return metrics
  // Constructing it in a worker makes prom-client answer the primary's requests, with these registries.
  aggregator ??= new AggregatorRegistry()
  AggregatorRegistry.setRegistries([metrics.registry])
  const pending = new Map<number, { resolve: (text: string) => void, reject: (err: Error) => void }>()
  let nextId = 0
  worker.on('message', (message: MetricsMessage | undefined) => {
    if (message?.type !== 'blog-read-api:metrics') return
    const waiting = pending.get(message.id)
    pending.delete(message.id)
    if (message.text !== undefined) waiting?.resolve(message.text)
    else waiting?.reject(new Error(`the cluster's metrics could not be gathered: ${message.error ?? 'no answer'}`))
  })
  return {
    ...metrics,
    scrape: async () => await new Promise<string>((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`the cluster primary did not send the metrics within ${SCRAPE_TIMEOUT_MS} ms`))
      }, SCRAPE_TIMEOUT_MS)
      pending.set(id, {
        resolve: (text) => { clearTimeout(timer); resolve(text) },
        reject: (err) => { clearTimeout(timer); reject(err) }
      })
      worker.send({ type: 'blog-read-api:metrics-request', id } satisfies MetricsMessage)
    })
  }
}

/** In the cluster primary: answers the workers' scrapes with the metrics of all of them. */
export function serveClusterMetrics (): void {
  aggregator ??= new AggregatorRegistry()
  const gatherer = aggregator
  cluster.on('message', (worker, message: MetricsMessage | undefined) => {
    if (message?.type !== 'blog-read-api:metrics-request') return
    const answer = (reply: MetricsMessage): void => { if (worker.isConnected()) worker.send(reply) }
    gatherer.clusterMetrics().then(
      (text: string) => answer({ type: 'blog-read-api:metrics', id: message.id, text }),
      (err: unknown) => answer({ type: 'blog-read-api:metrics', id: message.id, error: err instanceof Error ? err.message : String(err) })
    )
  })
}
