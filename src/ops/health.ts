// Readiness: whether a tier can serve now. The post API is ready when it can
// query its `posts` table (src/ops/store-readiness.ts), the front when at least one upstream is in
// rotation; neither while shutting down (src/http/app.ts answers every request 503 then). Liveness needs
// no check: a process that answers `/healthz` is alive. Nothing here reaches the store: the front
// uses it.

/** `reason` is shown to the prober (nothing internal); `cause`, for the log only. */
export type Readiness = { ready: true } | { ready: false, reason: string, cause?: unknown }

/** Whether a tier can serve now; cheap, or bounded and shared among concurrent probes. */
export type ReadinessCheck = () => Readiness | Promise<Readiness>

export const READY: Readiness = Object.freeze({ ready: true })

export interface SharedCheckOptions {
  /** A result is reused until it is this old. */
  reuseMs: number
  /** A check that has not settled by then counts as not ready (it is left to finish on its own). */
  timeoutMs: number
  /** Told when the result differs from the one before (the first is compared with ready). */
  onChange?: (readiness: Readiness) => void
  /** The clock, injected by tests. */
  now?: () => number
}

/**
 * Runs `check` at most once per `reuseMs`: concurrent probes share the check under way, later
 * ones reuse its result until it is `reuseMs` old. A check slower than `timeoutMs` is not ready.
 */
export function createSharedCheck (check: () => Promise<Readiness>, { reuseMs, timeoutMs, onChange, now = () => performance.now() }: SharedCheckOptions): ReadinessCheck {
  let running: Promise<Readiness> | undefined
  let last: { readiness: Readiness, at: number } | undefined
  const timedOut: Readiness = { ready: false, reason: `The check did not finish within ${timeoutMs} ms.` }

  async function bounded (): Promise<Readiness> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<Readiness>((resolve) => { timer = setTimeout(() => resolve(timedOut), timeoutMs) })
    try {
      return await Promise.race([check(), late])
    } catch (err) {
      return { ready: false, reason: 'The check failed.', cause: err }
    } finally {
      clearTimeout(timer)
    }
  }

  return () => {
    if (last !== undefined && now() - last.at < reuseMs) return last.readiness
    running ??= bounded().then((readiness) => {
      if (readiness.ready !== (last?.readiness.ready ?? true)) onChange?.(readiness)
      last = { readiness, at: now() }
      running = undefined
      return readiness
    })
    return running
  }
}

const NO_UPSTREAM: Readiness = Object.freeze({ ready: false, reason: 'No upstream post API is in rotation.' })

/** The front's readiness: at least one upstream in rotation (a count the upstream client keeps). */
export function createUpstreamReadiness (upstream: { inRotation: () => number }): ReadinessCheck {
  return () => upstream.inRotation() > 0 ? READY : NO_UPSTREAM
}
