// The operational routes every listener of ours answers: GET /healthz (the
// process answers), GET /readyz (it can serve) and, where the settings put it, GET /metrics.
// They are for machines, not readers: no access line at info, no CORS headers, never shed under
// load (a load balancer must not take a busy instance for a dead one), not counted in the request
// metrics.
import type { FastifyContextConfig, FastifyInstance, FastifyReply } from 'fastify'
import { PROBLEM_CONTENT_TYPE, problemBody } from '../contract/problems.js'
import { READY, type ReadinessCheck } from './health.js'
import type { ProcessMetrics } from './metrics.js'
import type { OperationalSchemas } from './operational-schemas.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An operational route: see src/ops/operational-routes.ts. */
    operational?: boolean
    /** @fastify/under-pressure's per-route handler; resolving nothing lets the request through. */
    pressureHandler?: () => void
  }
}

export interface Operations {
  /** Whether the app can serve now; by default it can whenever it answers. */
  ready?: ReadinessCheck
  /** Answers GET /metrics with this scrape; undefined: not on this listener. */
  metrics?: Pick<ProcessMetrics, 'scrape' | 'contentType'>
}

/** What a tier app takes for its operational side (the lifecycle decides, from the settings). */
export interface TierOperationsOptions {
  /** The process's metrics; undefined: none are kept (METRICS=off). */
  metrics?: ProcessMetrics
  /** Whether this tier's port answers GET /metrics (no ADMIN_PORT); by default it does when there are metrics. */
  metricsRoute?: boolean
  /** Whether the tier can serve now; each tier has its default. */
  ready?: ReadinessCheck
}

export const HEALTH_PATH = '/healthz'
export const READY_PATH = '/readyz'
export const METRICS_PATH = '/metrics'

/** The route config of every operational route (and of its 405 answers). */
export const OPERATIONAL_CONFIG: FastifyContextConfig = Object.freeze({ operational: true, pressureHandler: () => {} })

const OK_BODY = Buffer.from('{"status":"ok"}')
const READY_BODY = Buffer.from('{"status":"ready"}')
const JSON_TYPE = 'application/json'

/** The paths `registerOperationalRoutes` answers with these operations. */
export function operationalPaths ({ metrics }: Operations): string[] {
  return metrics === undefined ? [HEALTH_PATH, READY_PATH] : [HEALTH_PATH, READY_PATH, METRICS_PATH]
}

/**
 * GET (and HEAD) on the operational paths; src/http/app.ts answers their other methods (405, given
 * `operationalPaths`). `schemas`: their OpenAPI documentation, where the app has it (declare the
 * routes after registerApiDocs then).
 */
export function registerOperationalRoutes (app: FastifyInstance, { ready, metrics }: Operations, schemas?: OperationalSchemas): void {
  const noStore = (reply: FastifyReply): FastifyReply => reply.header('cache-control', 'no-store')
  app.get(HEALTH_PATH, { config: OPERATIONAL_CONFIG, schema: schemas?.health }, async (_request, reply) => noStore(reply).header('content-type', JSON_TYPE).send(OK_BODY))
  app.get(READY_PATH, { config: OPERATIONAL_CONFIG, schema: schemas?.ready }, async (_request, reply) => {
    const readiness = ready === undefined ? READY : await ready()
    if (readiness.ready) return noStore(reply).header('content-type', JSON_TYPE).send(READY_BODY)
    // As every 503: when to ask again. Readiness is checked about once a second.
    return noStore(reply).code(503).header('retry-after', '1').header('content-type', PROBLEM_CONTENT_TYPE).send(problemBody('not-ready', readiness.reason))
  })
  if (metrics !== undefined) {
    app.get(METRICS_PATH, { config: OPERATIONAL_CONFIG, schema: schemas?.metrics }, async (_request, reply) =>
      noStore(reply).header('content-type', metrics.contentType).send(await metrics.scrape()))
  }
}
