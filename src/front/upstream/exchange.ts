// One GET on one undici Dispatcher, through its low-level `dispatch` API: the answer is read into
// a few buffers, or handed over as a stream once it passes a threshold, bounded in bytes and
// in time. undici's `request()` would give each answer a Readable body, a promise per chunk and
// an AbortSignal listener: about a fifth of the front's CPU per call.
import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { ProblemError } from '../../contract/problems.js'
import { relayCollector } from '../../lib/young-collection.js'

/** What came back: the whole body, or the start of it with `stream` carrying it all. */
export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  /** The whole body, read within the byte limit; empty when `stream` is set. */
  body: Buffer
  /**
   * Set when the body passed the streaming threshold: the whole body, starting with the bytes
   * already read. It errors if the upstream breaks off or exceeds the byte limit; the call's
   * deadline no longer applies (only the idle time-out between chunks).
   */
  stream?: Readable
}

export interface ExchangeLimits {
  /** A larger body is a 502 (or, once streaming, an error of the stream). */
  maxBytes: number
  /**
   * Bodies declared larger than this are handed over as a stream instead of being read whole;
   * so are bodies of unknown length past min(this, 1 MiB). Undefined: always read whole.
   */
  streamAbove: number | undefined
}

/**
 * A call's whole budget: one timer, which aborts whatever exchange is under way when it fires
 * (then `expired`). Cheaper than an AbortController per call, whose signal undici listens to.
 */
export class CallDeadline {
  expired = false
  #timer: NodeJS.Timeout
  #onExpire: ((err: Error) => void) | undefined

  constructor (ms: number) {
    this.#timer = setTimeout(() => {
      this.expired = true
      this.#onExpire?.(new DeadlineError())
    }, ms)
  }

  /** `abort` is called if the deadline passes while the exchange runs (its answer not yet handed over). */
  watch (abort: ((err: Error) => void) | undefined): void {
    this.#onExpire = abort
  }

  release (): void {
    clearTimeout(this.#timer)
    this.#onExpire = undefined
  }
}

/** The deadline passed (the call's problem is a 504). */
export class DeadlineError extends Error {
  constructor () {
    super('the upstream call ran out of time')
    this.name = 'DeadlineError'
  }
}

/** Bytes of a body of unknown length read before it is handed over as a stream. */
const UNKNOWN_LENGTH_WINDOW = 1024 * 1024

/** One exchange. Rejects with undici's error (or DeadlineError, or a 502 ProblemError for a body too large). */
export function exchange (dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, limits: ExchangeLimits, deadline: CallDeadline): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const handler = new ExchangeHandler(limits, deadline, resolve, reject)
    if (deadline.expired) return reject(new DeadlineError())
    deadline.watch((err) => handler.abort(err))
    try {
      dispatcher.dispatch(request, handler)
    } catch (err) {
      handler.abort(err as Error)
    }
  })
}

class ExchangeHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined
  /** Set before the controller exists: abort as soon as it does. */
  #abortReason: Error | undefined
  #status = 0
  #headers: IncomingHttpHeaders = {}
  #chunks: Buffer[] = []
  #size = 0
  #streamPast = Infinity
  #stream: Readable | undefined
  #settled = false

  constructor (
    readonly limits: ExchangeLimits,
    readonly deadline: CallDeadline,
    readonly resolve: (answer: Answer) => void,
    readonly reject: (err: unknown) => void
  ) {}

  abort (err: Error): void {
    if (this.#controller === undefined) this.#abortReason = err
    else this.#controller.abort(err)
    // Rejected now even if undici still waits for a connection to send it on.
    this.#fail(err)
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason)
  }

  onResponseStart (controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are informational: the real one follows.
    if (status < 200) return
    this.#status = status
    this.#headers = headers
    const header = headers['content-length']
    const declared = typeof header === 'string' ? Number(header) : undefined
    if (declared !== undefined && declared > this.limits.maxBytes) return controller.abort(tooLarge(this.limits.maxBytes))
    this.#streamPast = streamThreshold(declared, this.limits.streamAbove)
    if (this.#streamPast === 0) this.#handOver(controller)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#size += chunk.length
    // Leaving now destroys the connection: it is not read any further.
    if (this.#size > this.limits.maxBytes) return controller.abort(tooLarge(this.limits.maxBytes))
    if (this.#stream !== undefined) {
      relayCollector.relayed(chunk.length)
      if (!this.#stream.push(chunk)) controller.pause()
      return
    }
    this.#chunks.push(chunk)
    if (this.#size > this.#streamPast) this.#handOver(controller)
  }

  onResponseEnd (): void {
    if (this.#stream !== undefined) {
      this.#stream.push(null)
      return
    }
    this.#settle()
    const body = this.#chunks.length === 1 ? this.#chunks[0] as Buffer : Buffer.concat(this.#chunks, this.#size)
    this.resolve({ status: this.#status, headers: this.#headers, body })
  }

  onResponseError (_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#stream !== undefined) this.#stream.destroy(err)
    else this.#fail(err)
  }

  #fail (err: unknown): void {
    if (this.#settled) return
    this.#settle()
    this.reject(err)
  }

  /**
   * This exchange is over for the deadline: the answer is handed over, or failed. The deadline
   * itself runs on, for a retry of the same call; the call releases it.
   */
  #settle (): void {
    this.#settled = true
    this.deadline.watch(undefined)
  }

  /** From now on the body flows to a stream, with back-pressure; its reader going away aborts the exchange. */
  #handOver (controller: Dispatcher.DispatchController): void {
    const stream = new Readable({
      read: () => controller.resume(),
      destroy: (err, done) => {
        if (!controller.aborted) controller.abort(err ?? new Error('the relayed stream was closed'))
        done(err)
      }
    })
    // A failure before its reader attaches (a body too large in the first chunk, a reset) must
    // not take the process down as an unhandled 'error': the reader still meets it, the stream
    // being errored by then.
    stream.on('error', () => {})
    for (const chunk of this.#chunks) stream.push(chunk)
    this.#chunks = []
    this.#stream = stream
    this.#settle()
    this.resolve({ status: this.#status, headers: this.#headers, body: Buffer.alloc(0), stream })
  }
}

/**
 * Bytes read before a body is handed over as a stream: never without `streamAbove`; at once when
 * its declared length passes it; after a first window when its length is unknown (the post API
 * streams its large lists), so that the first byte is not held back.
 */
function streamThreshold (declared: number | undefined, streamAbove: number | undefined): number {
  if (streamAbove === undefined) return Infinity
  if (declared === undefined) return Math.min(streamAbove, UNKNOWN_LENGTH_WINDOW)
  return declared > streamAbove ? 0 : Infinity
}

function tooLarge (maxBytes: number): ProblemError {
  return new ProblemError('upstream-bad-response', `The upstream post API sent more than ${maxBytes} bytes.`)
}
