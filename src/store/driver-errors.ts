// What the dialects share when they tell a store outage (503, the client retries) from anything
// else (500: a defect of ours or an unexpected driver error, which retrying would not cure).

/** Socket-level failures Node reports on a connection to a database server. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT',
  'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN'
])

/** The server cannot be reached, or the connection to it broke. */
export function isNetworkFailure (err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code
  if (code !== undefined && NETWORK_ERROR_CODES.has(code)) return true
  // Connecting to a host name tries each of its addresses and reports all the failures together.
  return err instanceof AggregateError && err.errors.some((e: unknown) => e instanceof Error && isNetworkFailure(e))
}
