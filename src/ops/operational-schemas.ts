// The operational routes as route schemas, for each tier's OpenAPI document (src/http/docs/api-docs.ts).
// Documentation only, as the API routes' (src/http/docs/route-schemas.ts).
import { problemResponses } from '../http/docs/problem-schema.js'
import type { ProblemKind } from '../contract/problems.js'
import { headerSchemas, JSON_MEDIA_TYPE, requiredHeader } from '../http/docs/route-schemas.js'

export interface OperationalSchemas {
  health: object
  ready: object
  metrics: object
}

/** The tag of these operations in the documents. */
export const OPERATIONS_TAG = { name: 'operations', description: 'Probes and metrics: for load balancers, orchestrators and Prometheus, not for pages (no CORS).' }

/** Probes are never shed under load: `overloaded` is the one problem of any route they cannot answer. */
const NEVER: readonly ProblemKind[] = ['overloaded']

const NO_STORE = requiredHeader({ ...headerSchemas.cacheControl, const: 'no-store', description: '`no-store`: a probe or a scrape is never cached.' })
const HEADERS = { 'X-Request-Id': headerSchemas.requestIdEcho, 'Cache-Control': NO_STORE }

function statusBody (status: string, description: string): object {
  return {
    description,
    headers: HEADERS,
    content: { [JSON_MEDIA_TYPE]: { schema: { type: 'object', required: ['status'], properties: { status: { const: status } }, additionalProperties: false } } }
  }
}

export const OPERATIONAL_SCHEMAS: OperationalSchemas = {
  health: {
    operationId: 'health',
    summary: 'Liveness',
    description: 'The process answers. Not cached, not logged at info, never shed under load.',
    tags: [OPERATIONS_TAG.name],
    response: { 200: statusBody('ok', 'The process answers.'), ...problemResponses([], { except: NEVER }) }
  },
  ready: {
    operationId: 'readiness',
    summary: 'Readiness',
    description: 'Whether this tier can serve now: the post API when its `posts` table answers a query (checked at most once a second), ' +
      'the front when at least one upstream post API is in rotation. 503 `not-ready` otherwise, its `detail` saying why; ' +
      '503 `shutting-down` while the process shuts down.',
    tags: [OPERATIONS_TAG.name],
    response: { 200: statusBody('ready', 'The tier can serve.'), ...problemResponses(['not-ready'], { except: NEVER }) }
  },
  metrics: {
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    description: 'The process\'s metrics in the Prometheus text format 0.0.4 (with several workers, the sum over all of them). ' +
      'Here unless `ADMIN_PORT` moves it; absent with `METRICS=off`.',
    tags: [OPERATIONS_TAG.name],
    response: {
      200: {
        description: 'The metrics.',
        headers: HEADERS,
        content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } }
      },
      ...problemResponses([], { except: NEVER })
    }
  }
}
