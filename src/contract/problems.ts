// Every error either tier can answer, as RFC 9457 problem documents.
// One table, so the documents, the error handler and the tests share the same stable `type`s.

export const PROBLEM_TYPE_BASE = 'urn:blog-read-api:problem:'

/** Seconds a refused client (overloaded, shutting down, dependency unavailable) is asked to wait. */
export const RETRY_AFTER_S = 5

/** The detail of every `post-not-found`, whichever tier or path answers it. */
export const POST_NOT_FOUND_DETAIL = 'No post has this slug.'

export const PROBLEMS = {
  'bad-request': { status: 400, title: 'Bad request' },
  'invalid-slug': { status: 400, title: 'Invalid slug' },
  'invalid-query': { status: 400, title: 'Invalid query' },
  'not-found': { status: 404, title: 'Not found' },
  'post-not-found': { status: 404, title: 'Post not found' },
  'no-posts': { status: 404, title: 'No posts' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'sync-expired': { status: 410, title: 'Sync token expired' },
  'body-not-allowed': { status: 413, title: 'Request body not allowed' },
  'expectation-failed': { status: 417, title: 'Expectation failed' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  internal: { status: 500, title: 'Internal server error' },
  'upstream-unreachable': { status: 502, title: 'Upstream unreachable' },
  'upstream-bad-response': { status: 502, title: 'Bad upstream response' },
  'upstream-unavailable': { status: 503, title: 'Upstream unavailable' },
  'store-unavailable': { status: 503, title: 'Store unavailable' },
  overloaded: { status: 503, title: 'Service overloaded' },
  'shutting-down': { status: 503, title: 'Shutting down' },
  'not-ready': { status: 503, title: 'Not ready' },
  'upstream-timeout': { status: 504, title: 'Upstream timed out' },
  'http-version-not-supported': { status: 505, title: 'HTTP version not supported' }
} as const satisfies Record<string, { status: number, title: string }>

export type ProblemKind = keyof typeof PROBLEMS

/** The one media type of every problem answer, without parameters: JSON is UTF-8 by definition (RFC 8259). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

interface ProblemDocument {
  type: string
  title: string
  status: number
  detail: string
}

/** A failure with a known kind; the apps' error handler turns it into a problem document. */
export class ProblemError extends Error {
  readonly kind: ProblemKind
  readonly status: number
  /** Seconds or an HTTP date, sent as `Retry-After` (503 answers). */
  readonly retryAfter: number | string | undefined

  constructor (kind: ProblemKind, detail: string, options: { cause?: unknown, retryAfter?: number | string } = {}) {
    super(detail, { cause: options.cause })
    this.name = 'ProblemError'
    this.kind = kind
    this.status = PROBLEMS[kind].status
    this.retryAfter = options.retryAfter
  }
}

export function problemDocument (kind: ProblemKind, detail: string): ProblemDocument {
  const { status, title } = PROBLEMS[kind]
  return { type: PROBLEM_TYPE_BASE + kind, title, status, detail }
}

// Problem bodies are few and constant (details never echo input): serialised once each, as
// bytes, so that no framework adds a charset to their content type. Looked up by kind, then by
// detail: both are constant strings whose hashes V8 keeps, where one key joining them would be a
// new string to flatten and hash at each answer.
const problemBodies = new Map<ProblemKind, Map<string, Buffer>>()
let cachedBodies = 0

/** The problem document of `kind` with `detail`, serialised. */
export function problemBody (kind: ProblemKind, detail: string): Buffer {
  let ofKind = problemBodies.get(kind)
  if (ofKind === undefined) problemBodies.set(kind, ofKind = new Map())
  let body = ofKind.get(detail)
  if (body === undefined) {
    body = Buffer.from(JSON.stringify(problemDocument(kind, detail)))
    if (cachedBodies < 1000) {
      ofKind.set(detail, body)
      cachedBodies++
    }
  }
  return body
}

/** The problem kind for a framework error that carries only an HTTP status (Fastify's FST_ERR_*). */
export function problemKindForStatus (status: number): ProblemKind {
  switch (status) {
    case 404: return 'not-found'
    case 405: return 'method-not-allowed'
    case 408: return 'request-timeout'
    case 413: return 'body-not-allowed'
    case 417: return 'expectation-failed'
    case 431: return 'headers-too-large'
    case 503: return 'overloaded'
    default: return status >= 400 && status < 500 ? 'bad-request' : 'internal'
  }
}
