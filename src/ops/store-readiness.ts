// The post API's readiness: its `posts` table answers a query.
import type { Logger } from 'pino'
import { StoreUnavailableError, type PostStore } from '../store/store.js'
import { createSharedCheck, READY, type ReadinessCheck } from './health.js'

/** A store query runs at most this often, however many probes come (a load balancer's, Kubernetes', the fronts'). */
const STORE_CHECK_REUSE_MS = 1000
/** Longer than this, the store counts as not answering: Kubernetes' default probe time-out is 1 s. */
const STORE_CHECK_TIMEOUT_MS = 1000

/**
 * The post API's readiness: `posts` answers a query (store.probe) within a second, checked at
 * most once a second (by `now`, the monotonic clock unless a test injects one). Changes are logged: not ready at warn with the cause, ready again at info.
 */
export function createStoreReadiness (store: PostStore, logger?: Pick<Logger, 'warn' | 'info'>, now?: () => number): ReadinessCheck {
  return createSharedCheck(async () => {
    try {
      await store.probe()
      return READY
    } catch (err) {
      const reason = err instanceof StoreUnavailableError ? 'The post store is not answering.' : 'The post store failed to answer.'
      return { ready: false, reason, cause: err }
    }
  }, {
    reuseMs: STORE_CHECK_REUSE_MS,
    timeoutMs: STORE_CHECK_TIMEOUT_MS,
    now,
    onChange: (readiness) => {
      if (readiness.ready) logger?.info('ready: the post store answers again')
      else logger?.warn({ err: readiness.cause }, `not ready: ${readiness.reason}`)
    }
  })
}
