// The operational side of a serving process, from the settings: its metrics (METRICS), where
// /metrics is answered (ADMIN_PORT), and the admin listener when there is one.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { startAdmin, type Tier } from './admin.js'
import { clusterWide } from './cluster-metrics.js'
import { createProcessMetrics } from './metrics.js'
import type { TierOperationsOptions } from './operational-routes.js'

export interface ProcessOperations {
  /** What each tier app of the process takes (buildFrontApp, buildPostsApp). */
  readonly tierOptions: TierOperationsOptions
  /**
   * With ADMIN_PORT, starts the admin listener over the started `tiers` (closing them if it cannot
   * listen). Returns the apps to close on shutdown, in order: the admin listener first, so
   * that its /readyz fails before the tiers drain.
   */
  withAdmin: (tiers: readonly Tier[]) => Promise<FastifyInstance[]>
}

export function openOperations (config: Config, logger: Logger): ProcessOperations {
  const metrics = config.metricsEnabled ? clusterWide(createProcessMetrics()) : undefined
  return {
    tierOptions: { metrics, metricsRoute: config.adminPort === undefined },
    async withAdmin (tiers) {
      const apps = tiers.map((tier) => tier.app)
      if (config.adminPort === undefined) return apps
      try {
        const admin = await startAdmin({ host: config.host, port: config.adminPort, server: config.server, logger: logger.child({ tier: 'admin' }), tiers, metrics })
        return [admin, ...apps]
      } catch (err) {
        for (const app of apps) await app.close()
        throw err
      }
    }
  }
}
