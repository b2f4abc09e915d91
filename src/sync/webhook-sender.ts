// Delivers each change to every webhook URL: one POST at a time per URL, in order, signed anew
// at each attempt (a receiver refuses a timestamp older than a few minutes), and retried with
// exponential back-off and jitter until it succeeds or a failed attempt ends more than
// `retryForMs` after the change was queued. Memory is bounded: at most `maxPending` deliveries
// wait per URL; beyond that a change is folded into the newest waiting one (one delivery then
// covers both, named by the later token). A URL that answers 410 Gone is sent nothing more.
import type { Dispatcher } from 'undici'
import { composeChanges, isEmptyChange, type Change } from './change.js'
import { realTimers, type Timers } from '../lib/timers.js'
import { webhookBody } from './webhook-payload.js'
import { signWebhook } from './webhook-signature.js'

/**
 * undici, loaded with the first delivery: a post API without webhooks never needs it, and its
 * 111 modules added about 7 % to that tier's start-up CPU (docs/decisions.md, "Start-up").
 */
let loaded: Promise<typeof import('undici')> | undefined
const undici = async (): Promise<typeof import('undici')> => await (loaded ??= import('undici'))

export interface WebhookSenderOptions {
  urls: readonly string[]
  /** Signing keys (parseWebhookSecret); the first is the current one. */
  keys: readonly Buffer[]
  timers?: Timers
  random?: () => number
  /** One attempt's budget, connection to last byte; the specification suggests 15 to 30 s. */
  timeoutMs?: number
  /** The first retry's wait; each next one doubles, up to `maxRetryMs`. */
  firstRetryMs?: number
  maxRetryMs?: number
  /** How long after a change was queued a failed attempt is still retried. */
  retryForMs?: number
  /** Deliveries waiting per URL, at least 2. */
  maxPending?: number
  dispatcher?: Dispatcher
  /** Told about every attempt (the log; tests). */
  onAttempt?: (attempt: AttemptOutcome) => void
}

export interface AttemptOutcome {
  url: string
  /** The change's token. */
  id: string
  /** The receiver's status, or undefined when none came (refused, reset, timed out). */
  status: number | undefined
  error?: unknown
  delivered: boolean
  /** What happens next to this delivery after a failure. */
  next?: 'retry' | 'give-up' | 'disabled'
}

/** Totals since start, for the metrics. */
export interface WebhookStats {
  delivered: number
  failedAttempts: number
  gaveUp: number
  folded: number
  /** Deliveries waiting now, all URLs. */
  pending: number
}

export interface WebhookSender {
  /** Queues `change` for every URL; a change that changes nothing sends nothing. */
  send: (change: Change) => void
  stats: () => WebhookStats
  /** Stops: aborts attempts under way and forgets what waits (other processes send their copies). */
  close: () => void
}

export const WEBHOOK_DEFAULTS = {
  timeoutMs: 15_000,
  firstRetryMs: 5_000,
  maxRetryMs: 10 * 60_000,
  retryForMs: 60 * 60_000,
  maxPending: 100
}

interface Delivery {
  change: Change
  queuedAt: number
  body: string
  retries: number
}

interface Target {
  url: string
  queue: Delivery[]
  busy: boolean
  disabled: boolean
  cancel: (() => void) | undefined
  abort: AbortController | undefined
}

/** Seconds a `Retry-After` header asks for (the date form is not used by receivers we know). */
function retryAfterMs (header: string | string[] | undefined): number {
  return typeof header === 'string' && /^\d+$/.test(header) ? Number(header) * 1000 : 0
}

export function createWebhookSender (options: WebhookSenderOptions): WebhookSender {
  const settings = {
    timeoutMs: options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
    firstRetryMs: options.firstRetryMs ?? WEBHOOK_DEFAULTS.firstRetryMs,
    maxRetryMs: options.maxRetryMs ?? WEBHOOK_DEFAULTS.maxRetryMs,
    retryForMs: options.retryForMs ?? WEBHOOK_DEFAULTS.retryForMs,
    maxPending: options.maxPending ?? WEBHOOK_DEFAULTS.maxPending
  }
  const { keys, dispatcher } = options
  const timers = options.timers ?? realTimers
  const random = options.random ?? Math.random
  if (!(settings.maxPending >= 2)) throw new RangeError('maxPending is at least 2')
  const stats = { delivered: 0, failedAttempts: 0, gaveUp: 0, folded: 0 }
  const targets: Target[] = options.urls.map((url) => ({ url, queue: [], busy: false, disabled: false, cancel: undefined, abort: undefined }))
  let closed = false

  function enqueue (target: Target, change: Change, now: number): void {
    if (target.disabled) return
    const newest = target.queue.at(-1)
    if (target.queue.length >= settings.maxPending && newest !== undefined) {
      // It now carries a change queued now, retried for as long as one.
      newest.change = composeChanges(newest.change, change)
      newest.body = webhookBody(newest.change, now)
      newest.queuedAt = now
      stats.folded++
    } else target.queue.push({ change, queuedAt: now, body: webhookBody(change, now), retries: 0 })
    if (!target.busy) attempt(target)
  }

  /** The wait before retry number `retries` (from 1): doubling, capped, the upper half jittered. */
  function backoffMs (retries: number): number {
    const ceiling = Math.min(settings.maxRetryMs, settings.firstRetryMs * 2 ** (retries - 1))
    return ceiling / 2 + random() * ceiling / 2
  }

  async function post (target: Target, delivery: Delivery): Promise<{ status: number | undefined, retryAfter: number, error?: unknown }> {
    const controller = new AbortController()
    target.abort = controller
    const stopTimer = timers.setTimeout(() => controller.abort(new Error(`no answer within ${settings.timeoutMs} ms`)), settings.timeoutMs)
    try {
      const timestampS = Math.floor(timers.now() / 1000)
      const { request } = await undici()
      const response = await request(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'blog-read-api', ...signWebhook(keys, delivery.change.until, timestampS, delivery.body) },
        body: delivery.body,
        signal: controller.signal,
        ...(dispatcher === undefined ? {} : { dispatcher })
      })
      await response.body.dump()
      return { status: response.statusCode, retryAfter: retryAfterMs(response.headers['retry-after']) }
    } catch (error) {
      return { status: undefined, retryAfter: 0, error: controller.signal.aborted ? controller.signal.reason : error }
    } finally {
      stopTimer()
      target.abort = undefined
    }
  }

  function attempt (target: Target): void {
    const delivery = target.queue[0]
    if (closed || delivery === undefined) return
    target.busy = true
    target.cancel = undefined
    // `post` never rejects: every failure is an outcome.
    post(target, delivery).then((result) => { if (!closed) settle(target, delivery, result) })
  }

  function settle (target: Target, delivery: Delivery, { status, retryAfter, error }: Awaited<ReturnType<typeof post>>): void {
    const delivered = status !== undefined && status >= 200 && status < 300
    const id = delivery.change.until
    target.busy = false
    if (delivered) {
      stats.delivered++
      target.queue.shift()
      options.onAttempt?.({ url: target.url, id, status, delivered })
      attempt(target)
      return
    }
    stats.failedAttempts++
    let next: AttemptOutcome['next'] = 'retry'
    if (status === 410) {
      // The receiver says it wants nothing more from us.
      next = 'disabled'
      target.disabled = true
      stats.gaveUp += target.queue.length
      target.queue = []
    } else if (timers.now() - delivery.queuedAt >= settings.retryForMs) {
      next = 'give-up'
      stats.gaveUp++
      target.queue.shift()
    }
    options.onAttempt?.({ url: target.url, id, status, error, delivered, next })
    if (next !== 'retry') {
      attempt(target)
      return
    }
    delivery.retries++
    const waitMs = Math.min(settings.maxRetryMs, Math.max(backoffMs(delivery.retries), retryAfter))
    target.busy = true
    target.cancel = timers.setTimeout(() => attempt(target), waitMs)
  }

  return {
    send (change) {
      if (closed || isEmptyChange(change) || change.since === change.until) return
      const now = timers.now()
      for (const target of targets) enqueue(target, change, now)
    },
    stats: () => ({ ...stats, pending: targets.reduce((sum, target) => sum + target.queue.length, 0) }),
    close () {
      closed = true
      for (const target of targets) {
        target.cancel?.()
        target.abort?.abort()
        target.queue = []
      }
    }
  }
}
