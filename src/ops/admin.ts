// The admin listener (ADMIN_PORT): one per process, on HOST, answering /metrics for all the
// process's tiers (one Prometheus target per process), and /healthz and /readyz for them too.
// The tiers' own ports keep their probes: the fronts probe their upstreams' /readyz there, and a
// load balancer checks the port it sends traffic to. Only /metrics leaves them.
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { ServerOptions } from '../config.js'
import { buildHttpApp } from '../http/app.js'
import { READY, type Readiness, type ReadinessCheck } from './health.js'
import type { ProcessMetrics } from './metrics.js'
import { operationalPaths, READY_PATH, registerOperationalRoutes } from './operational-routes.js'

export interface Tier {
  /** For the reason a probe is given: `front`, `post API`. */
  name: string
  app: FastifyInstance
}

export interface AdminOptions {
  host: string
  port: number
  server: ServerOptions
  logger: Logger
  /** The process's tiers, whose readiness this listener reports together. */
  tiers: readonly Tier[]
  metrics: ProcessMetrics | undefined
}

/**
 * Ready when every tier answers its own /readyz with 200: asked in-process (no socket), so the
 * answer is exactly the tier's, shutting down included.
 */
export function tiersReadiness (tiers: readonly Tier[]): ReadinessCheck {
  return async () => {
    const answers = await Promise.all(tiers.map(async ({ name, app }): Promise<Readiness> => {
      try {
        const answer = await app.inject({ method: 'GET', url: READY_PATH })
        if (answer.statusCode === 200) return READY
        const { detail } = answer.json<{ detail?: unknown }>()
        return { ready: false, reason: `The ${name} is not ready: ${typeof detail === 'string' ? detail : `status ${answer.statusCode}`}` }
      } catch (err) {
        return { ready: false, reason: `The ${name} is not answering.`, cause: err }
      }
    }))
    return answers.find((readiness) => !readiness.ready) ?? READY
  }
}

export async function startAdmin ({ host, port, server, logger, tiers, metrics }: AdminOptions): Promise<FastifyInstance> {
  const operations = { ready: tiersReadiness(tiers), metrics }
  const app = buildHttpApp({
    ...server,
    // Nothing here is shed: probes and scrapes must answer when the process is busiest.
    loadShedDelayMs: 0,
    logger,
    routes: [],
    corsOrigins: [],
    operationalRoutes: operationalPaths(operations)
  })
  registerOperationalRoutes(app, operations)
  await app.listen({ host, port, listenTextResolver: (address) => `admin listening at ${address} (/healthz, /readyz${metrics === undefined ? '' : ', /metrics'})` })
  return app
}
