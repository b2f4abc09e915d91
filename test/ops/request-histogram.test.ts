// The request histogram against prom-client's own as the reference: for any observations, in any
// series, the same samples (names, labels, values) at a scrape, and after a reset.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { Histogram, Registry } from 'prom-client'
import { LATENCY_BUCKETS_S } from '../../src/ops/metrics.js'
import { createRequestHistogram } from '../../src/ops/request-histogram.js'

const NAME = 'h_seconds'
const SERIES = [{ route: '/a', status: '200' }, { route: '/b', status: '404' }, { route: '/a', status: '503' }]

async function samplesOf (registry: Registry): Promise<Map<string, number>> {
  const samples = new Map<string, number>()
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const { metricName, labels, value } of metric.values as Array<{ metricName: string, labels: Record<string, unknown>, value: number }>) {
      const key = Object.keys(labels).sort().map((k) => `${k}=${String(labels[k])}`).join(',')
      samples.set(`${metricName}{${key}}`, value)
    }
  }
  return samples
}

test('the same samples as prom-client\'s histogram, whatever the observations', async () => {
  const value = fc.oneof(fc.constantFrom(0, ...LATENCY_BUCKETS_S), fc.double({ min: 0, max: 20, noNaN: true }))
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.nat(SERIES.length - 1), value), { maxLength: 60 }), fc.boolean(), async (observations, reset) => {
    const reference = new Registry()
    const expected = new Histogram({ name: NAME, help: 'h', labelNames: ['route', 'status'], buckets: LATENCY_BUCKETS_S, registers: [reference] })
    const registry = new Registry()
    const histogram = createRequestHistogram(registry, NAME, 'h', LATENCY_BUCKETS_S)
    const series = SERIES.map((labels) => histogram.series(labels))
    // prom-client shows a series from its first observation; ours from its creation.
    for (const labels of SERIES) expected.zero(labels)
    for (const [i, v] of observations) {
      expected.observe(SERIES[i] as (typeof SERIES)[number], v)
      histogram.observe(series[i] as (typeof series)[number], v)
    }
    if (reset) {
      reference.resetMetrics()
      registry.resetMetrics()
      for (const labels of SERIES) expected.zero(labels)
    }
    assert.deepEqual(await samplesOf(registry), await samplesOf(reference))
  }))
})
