// The problem documents of src/contract/problems.ts as route schemas (OpenAPI): one shared `Problem`, and
// for each operation, per status, the kinds it can answer, with their `type`s as an enum and an
// example each. Built from the PROBLEMS table, so a kind's URN and title live in one place.
import type { OpenAPIV3_1 as OpenApi } from 'openapi-types'
import { ALLOWED_METHODS } from '../answer-headers.js'
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, PROBLEMS, problemDocument, type ProblemKind } from '../../contract/problems.js'
import { headerSchemas, REQUIRED_HEADER, requiredHeader, type ResponseSchema } from './route-schemas.js'

/**
 * Problems that no route decides: the router, the HTTP edge, the error handler or the server's
 * state can give them on any route. `not-found` (no route) and `method-not-allowed` (a route, but
 * another method) answer requests that reach no operation: they are the document's
 * `components.responses` (PROBLEM_COMPONENT_RESPONSES).
 */
export const ANY_ROUTE_PROBLEMS: readonly ProblemKind[] = [
  'bad-request', 'request-timeout', 'body-not-allowed', 'expectation-failed', 'headers-too-large', 'internal', 'overloaded',
  'shutting-down', 'http-version-not-supported'
]

const problemKinds = Object.keys(PROBLEMS) as ProblemKind[]

/** Every problem either tier answers: the `Problem` component. */
export const PROBLEM_SCHEMA = {
  $id: 'Problem',
  description: 'An RFC 9457 problem document. `type` is stable per kind of failure: branch on it, not on `title` or `detail`.',
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', enum: problemKinds.map((kind) => PROBLEM_TYPE_BASE + kind), description: `\`${PROBLEM_TYPE_BASE}<kind>\`` },
    title: { type: 'string', description: 'The kind, in English; the same for every answer of that kind.' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status code.' },
    detail: { type: 'string', description: 'What went wrong this time, in English. Never any internal detail.' }
  },
  additionalProperties: false
} as const

/** The problem documents of `kinds` (all of one status): a `Problem` whose `type` is one of theirs. */
function problemMediaType (kinds: readonly ProblemKind[]): Record<string, unknown> {
  const status = PROBLEMS[kinds[0] as ProblemKind].status
  return {
    schema: {
      allOf: [
        { $ref: 'Problem#' },
        { properties: { type: { enum: kinds.map((kind) => PROBLEM_TYPE_BASE + kind) }, status: { const: status } } }
      ]
    },
    examples: Object.fromEntries(kinds.map((kind) => [kind, {
      summary: PROBLEMS[kind].title,
      value: problemDocument(kind, 'What went wrong this time, in English.')
    }]))
  }
}

export interface ProblemResponseOptions {
  /** Retry-After on 502 and 504 answers too: the front sends it while no upstream is in rotation. */
  retryAfterOnGatewayErrors?: boolean
  /** More headers some answers of a status may carry. */
  headers?: Record<number, Record<string, unknown>>
  /** Problems of ANY_ROUTE_PROBLEMS this operation never answers (the probes are never shed). */
  except?: readonly ProblemKind[]
}

/** Headers of a problem answer with `status`: Retry-After always on 503. */
function problemHeaders (status: number, { retryAfterOnGatewayErrors = false, headers = {} }: ProblemResponseOptions): Record<string, unknown> {
  const retryAfter = status === 503
    ? requiredHeader(headerSchemas.retryAfter)
    : retryAfterOnGatewayErrors && (status === 502 || status === 504)
      ? { ...headerSchemas.retryAfter, description: `${headerSchemas.retryAfter.description} Sent while no upstream is in rotation (each is still tried): one probe interval.` }
      : undefined
  return {
    'X-Request-Id': headerSchemas.requestIdEcho,
    'Cache-Control': requiredHeader({ ...headerSchemas.cacheControl, const: 'no-store', description: '`no-store`: a problem is never cached.' }),
    ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }),
    // 405: the methods there are; 413: the same, to a client whose body was refused.
    ...(status === 405 || status === 413 ? { Allow: requiredHeader({ type: 'string', const: ALLOWED_METHODS, description: 'The methods this path answers.' }) } : {}),
    ...headers[status]
  }
}

/**
 * The problem responses of an operation, by status: `kinds` (what the route itself decides) and
 * every route's problems (ANY_ROUTE_PROBLEMS).
 */
export function problemResponses (kinds: readonly ProblemKind[], options: ProblemResponseOptions = {}): Record<string, ResponseSchema> {
  const byStatus = new Map<number, ProblemKind[]>()
  for (const kind of [...kinds, ...ANY_ROUTE_PROBLEMS.filter((kind) => options.except?.includes(kind) !== true)]) {
    const { status } = PROBLEMS[kind]
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind])
  }
  const responses: Record<string, ResponseSchema> = {}
  for (const [status, statusKinds] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: statusKinds.map((kind) => PROBLEMS[kind].title).join('; '),
      headers: problemHeaders(status, options),
      content: { [PROBLEM_CONTENT_TYPE]: problemMediaType(statusKinds) }
    }
  }
  return responses
}

/**
 * Answers to requests that reach no operation, in OpenAPI form (the document's
 * `components.responses`; `Problem` is `#/components/schemas/Problem` there).
 */
export const PROBLEM_COMPONENT_RESPONSES: Record<string, OpenApi.ResponseObject> = {
  NotFound: componentResponse('not-found', 'No route at this path (any method).'),
  MethodNotAllowed: componentResponse('method-not-allowed', 'A route is at this path, but only for GET and HEAD (OPTIONS is the CORS preflight where CORS is on).')
}

function componentResponse (kind: ProblemKind, description: string): OpenApi.ResponseObject {
  const { schema, examples } = problemMediaType([kind]) as { schema: { allOf: [unknown, OpenApi.SchemaObject] }, examples: Record<string, OpenApi.ExampleObject> }
  const { status } = PROBLEMS[kind]
  return {
    description,
    headers: Object.fromEntries(Object.entries(problemHeaders(status, {})).map(([name, header]) => [name, headerObject(header as HeaderSchema)])),
    content: {
      [PROBLEM_CONTENT_TYPE]: { schema: { allOf: [{ $ref: '#/components/schemas/Problem' }, schema.allOf[1]] }, examples }
    }
  }
}

type HeaderSchema = { description?: string, [REQUIRED_HEADER]?: true } & Record<string, unknown>

/** A route schema's response header as an OpenAPI header object (what @fastify/swagger and api-docs.ts make of it). */
function headerObject ({ description, [REQUIRED_HEADER]: required, ...schema }: HeaderSchema): OpenApi.HeaderObject {
  return { ...(required === true ? { required } : {}), ...(description === undefined ? {} : { description }), schema: schema as OpenApi.HeaderObject['schema'] }
}
