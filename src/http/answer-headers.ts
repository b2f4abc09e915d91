// What every answer of both tiers carries, whoever writes it (the framework, the edge, or the
// parser's refusal on the raw socket): security headers and a request id.
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

// OWASP REST Security Cheat Sheet headers for API responses (nothing ever sends X-Powered-By).
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'cross-origin'
} as const

/** The only methods any route answers; the `Allow` of every 405 (and 413). */
export const ALLOWED_METHODS = 'GET, HEAD'

/** A client-supplied request id is kept only when it is short and inert (no log or header injection). */
const REQUEST_ID = /^[\w.-]{1,128}$/

/** The client's `X-Request-Id` when acceptable, else a new one. */
export function requestId (headers: IncomingHttpHeaders | undefined): string {
  const header = headers?.['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}
