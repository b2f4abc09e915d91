// CORS for a public, read-only API (GET and HEAD, never with credentials). Ours rather than
// @fastify/cors because the same headers must go on answers written before any framework sees
// the request (the edge's refusals, the parser's) and its preflight refusals were not problems.

/** Headers a response reads that a cross-origin script may see. */
const EXPOSED_HEADERS = 'ETag, Link, X-Total-Count, X-Request-Id, Retry-After, Cache-Status'
/** Seconds a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = '86400'

export type CorsHeaders = Readonly<Record<string, string>>

export interface Cors {
  /** The CORS headers of any answer to a request from `origin` (undefined: none was sent). */
  headersFor: (origin: string | undefined) => CorsHeaders
  /**
   * The headers of the 204 answering a preflight (RFC 9110 OPTIONS with `Origin` and
   * `Access-Control-Request-Method`), besides those of `headersFor`.
   */
  preflightHeaders: (requestHeaders: string | undefined) => CorsHeaders
}

/** `origins`: '*' (any origin), or the exact origins allowed; an empty list turns CORS off (undefined). */
export function createCors (origins: '*' | readonly string[]): Cors | undefined {
  if (origins !== '*' && origins.length === 0) return undefined
  const exposed = { 'access-control-expose-headers': EXPOSED_HEADERS }
  // The allowed headers echo those asked for (nothing is secret without credentials), so a
  // preflight's answer varies with them; with a list of origins, every answer varies with Origin.
  const vary = origins === '*' ? 'Access-Control-Request-Headers' : 'Origin, Access-Control-Request-Headers'
  const preflight = { 'access-control-allow-methods': 'GET, HEAD', 'access-control-max-age': PREFLIGHT_MAX_AGE_S, vary }
  const preflightHeaders = (requested: string | undefined): CorsHeaders =>
    requested === undefined ? preflight : { ...preflight, 'access-control-allow-headers': requested }
  if (origins === '*') {
    const any = { ...exposed, 'access-control-allow-origin': '*' }
    return { headersFor: () => any, preflightHeaders }
  }
  const refused = { ...exposed, vary: 'Origin' }
  // One object per allowed origin, made once: the lane lists an object's headers once and keeps
  // them by the object (src/http/fast-lane.ts); a new one per request would be listed every time.
  const allowed = new Map(origins.map((origin) => [origin, { ...refused, 'access-control-allow-origin': origin }]))
  return {
    headersFor: (origin) => (origin === undefined ? undefined : allowed.get(origin)) ?? refused,
    preflightHeaders
  }
}
