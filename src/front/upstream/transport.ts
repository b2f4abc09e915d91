// How calls reach one upstream post API: its base URL and the undici Dispatchers to it.
import { Client, Pool, type Dispatcher } from 'undici'
import type { UpstreamTimeouts } from '../../config.js'

/** How calls reach one upstream. Whoever makes the dispatchers closes them. */
export interface UpstreamTransport {
  /** One base URL of API_URL: its origin and its base path, put before every upstream path. */
  apiUrl: URL
  /** Where calls go: a keep-alive Pool at the upstream's origin (or a MockAgent). */
  dispatcher: Dispatcher
  /**
   * A new connection for the one retry after a call broke before any answer, when no other
   * upstream is in rotation. Not the pool: its other idle sockets may be as stale as the one that
   * broke (an upstream closing idle sockets closes them together). Closed once used.
   */
  connectFresh: () => Dispatcher
}

/** Keep-alive connections the production pool holds to each upstream at most. */
const UPSTREAM_CONNECTIONS = 128

/** The production transport to one upstream: a bounded keep-alive Pool, one-off Clients for retries. */
export function createUpstreamTransport (apiUrl: URL, timeouts: UpstreamTimeouts): UpstreamTransport & { dispatcher: Pool } {
  const connect = { timeout: Math.min(timeouts.connectMs, timeouts.totalMs) }
  return {
    apiUrl,
    dispatcher: new Pool(apiUrl.origin, { connect, connections: UPSTREAM_CONNECTIONS }),
    connectFresh: () => new Client(apiUrl.origin, { connect })
  }
}

/** The request path of `path` (which starts with '/') on the upstream at `apiUrl`, under its base path. */
export function upstreamPath (apiUrl: URL, path: string): string {
  return apiUrl.pathname.replace(/\/+$/, '') + path
}

/** undici's own per-phase time-outs of one call; the connect time-out belongs to the dispatcher. */
export function phaseTimeouts (timeouts: UpstreamTimeouts): { headersTimeout: number, bodyTimeout: number } {
  return { headersTimeout: Math.min(timeouts.headersMs, timeouts.totalMs), bodyTimeout: timeouts.bodyIdleMs }
}
