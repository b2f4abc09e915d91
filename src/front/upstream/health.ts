// The probe of an upstream out of rotation: `GET {base}/readyz`. Any answer but a 503 shows the
// post API is there (before readiness existed it answered 404, which counts); a 503 says it
// cannot serve or is shutting down, and a refusal, a reset or a time-out that nobody is there.
import type { UpstreamTimeouts } from '../../config.js'
import { ProblemError } from '../../contract/problems.js'
import { classify } from './failures.js'
import { phaseTimeouts, upstreamPath, type UpstreamTransport } from './transport.js'

export const PROBE_PATH = '/readyz'

/** Resolves undefined when the upstream answered, or with the problem that keeps it out of rotation. */
export async function probeUpstream (upstream: UpstreamTransport, timeouts: UpstreamTimeouts, stop: AbortSignal): Promise<ProblemError | undefined> {
  // A probe is bounded like a call, so a hanging upstream stays out and its answer, once it
  // comes, brings it back at once.
  const budget = AbortSignal.any([stop, AbortSignal.timeout(timeouts.totalMs)])
  try {
    const response = await upstream.dispatcher.request({
      origin: upstream.apiUrl.origin,
      method: 'GET',
      path: upstreamPath(upstream.apiUrl, PROBE_PATH),
      headers: { accept: 'application/json' },
      signal: budget,
      ...phaseTimeouts(timeouts)
    })
    await response.body.dump()
    if (response.statusCode !== 503) return undefined
    return new ProblemError('upstream-unavailable', 'The upstream post API is not ready.')
  } catch (err) {
    return classify(err, budget.aborted)
  }
}
