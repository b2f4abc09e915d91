// The webhooks' metrics, read from the sender's totals at each scrape (nothing is counted per
// delivery here): what was delivered, what failed and was retried, what was given up.
import { Counter, type Registry } from 'prom-client'
import type { WebhookSender, WebhookStats } from '../sync/webhook-sender.js'
import { METRIC_PREFIX, registerScrapedGauge } from './metrics.js'

const COUNTERS: Array<{ name: string, help: string, stat: keyof WebhookStats }> = [
  { name: 'webhook_deliveries_total', help: 'Webhook deliveries a receiver accepted (2xx)', stat: 'delivered' },
  { name: 'webhook_failed_attempts_total', help: 'Webhook attempts that failed (non-2xx, refused, timed out); each is retried with back-off for an hour', stat: 'failedAttempts' },
  { name: 'webhook_given_up_total', help: 'Webhook deliveries dropped: still failing an hour after the change, or the receiver answered 410 Gone', stat: 'gaveUp' },
  { name: 'webhook_folded_total', help: 'Changes folded into a waiting delivery because the queue of a URL was full', stat: 'folded' }
]

export function registerWebhookMetrics (registry: Registry, sender: WebhookSender): void {
  for (const { name, help, stat } of COUNTERS) {
    registry.registerMetric(new Counter({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [],
      collect () {
        this.reset()
        this.inc(sender.stats()[stat])
      }
    }))
  }
  registerScrapedGauge(registry, 'webhook_pending', 'Webhook deliveries waiting (to be sent, or for a retry), all URLs', () => sender.stats().pending)
}
