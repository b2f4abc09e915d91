// Answers written below the framework. Fastify's routing, hooks and reply cost 2 to 5 µs of CPU
// per answer (a tenth of a refused slug's, 5 to 8 % of a held post's or list's, measured with
// bench/answer-cost.ts): a tier may take the commonest requests of its hottest routes here and
// write their answers on Node's response itself, with the headers, access line and metrics
// the framework's path gives them (src/http/app.ts). Anything else, and any outcome a lane does
// not write itself, goes to the framework, which answers it as if the lane were not there.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { AbandonedCallError } from '../lib/coalescer.js'
import { problemBody, PROBLEM_CONTENT_TYPE, PROBLEMS, type ProblemKind } from '../contract/problems.js'
import { SECURITY_HEADERS } from './answer-headers.js'
import type { Cors, CorsHeaders } from './cors.js'
import { MIN_COMPRESSED_BYTES, chooseEncoding, ifNoneMatchHolds, variantEtag, JSON_CONTENT_TYPE, type Representation } from './representation.js'

/**
 * The largest body written as text of its bytes (latin1: one character a byte). Node joins a text
 * body to its head and writes one string; a buffer goes beside the head, queued apart and written
 * with writev. Under callgrind at the front, a refused slug (a problem of 181 bytes) took
 * about 4.6 thousand instructions fewer as text; a held post of 3.9 KB 12 to 32 thousand more
 * (its text and the joined string are made anew for each answer, and collected).
 */
const WRITTEN_AS_TEXT_MAX_BYTES = 512

/** Header names and values, one after the other, as Node's `writeHead` takes them. */
export type HeaderList = readonly string[]

/** What the lane's tier gives each exchange: what every answer carries, and where it is counted. */
export interface LaneKit {
  /** The headers of every answer to `exchange` (security, request id, CORS for its origin), and its `Vary`, if any. */
  headersFor: (exchange: LaneExchange) => { headers: HeaderList, vary: string | undefined }
  /** The access line and the metrics of an answered request. */
  answered: (exchange: LaneExchange, route: string, status: number) => void
  /** The access line of a request whose client left before its answer. */
  left: (exchange: LaneExchange) => void
  /** Gives the request to the framework, which answers it (the lane's own work is handed with it by the tier). */
  handOver: (exchange: LaneExchange) => void
}

/**
 * Takes a request (true: it is answered through `exchange`) or leaves it to the framework
 * (false, before doing any work for it). Asked only for a GET without a body or an expectation,
 * outside shutdown and load shedding.
 */
export type Lane = (exchange: LaneExchange) => boolean

/** One request taken by a lane. */
export class LaneExchange {
  readonly start = performance.now()
  /** Given to the framework, which then writes its lines itself. */
  private handed = false

  constructor (
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The request id (the client's X-Request-Id when acceptable), as the framework would give it. */
    readonly id: string,
    private readonly kit: LaneKit
  ) {}

  /** Its client is still connected: the answer can be written. */
  answerable (): boolean {
    return this.req.socket.destroyed !== true
  }

  /**
   * Called before the lane waits for anything: a client that leaves before its answer is written
   * gets its access line saying so when it leaves (as the framework's path writes it).
   * `on`, not `once`: a request closes once, and `once` (its wrapper, removed as the request
   * closes) cost about 10 thousand more instructions per held answer under callgrind (4 to 5 %).
   */
  untilAnswered (): void {
    this.req.on('close', () => {
      if (!this.res.writableEnded && !this.handed) this.kit.left(this)
    })
  }

  /** Milliseconds since the request was taken. */
  elapsedMs (): number {
    return performance.now() - this.start
  }

  /**
   * Sends `representation` as the framework's path does: 304 when the client's copy is current,
   * else in the best encoding, with `Cache-Control`, `ETag` and `Vary: Accept-Encoding` after
   * the tier's own `headers`, typed `contentType`. True when it was written at once; a promise
   * when the body waits for its encoding (a held answer is written without one).
   */
  representation (route: string, representation: Representation, cacheControl: string, headers: HeaderList = [], contentType = JSON_CONTENT_TYPE): Promise<void> | true {
    const { headers: base, vary } = this.kit.headersFor(this)
    const common = [...base, ...headers, 'vary', vary === undefined ? 'Accept-Encoding' : `${vary}, Accept-Encoding`, 'cache-control', cacheControl]
    const { etag, body } = representation
    if (ifNoneMatchHolds(this.req.headers['if-none-match'], etag)) {
      common.push('etag', etag)
      this.write(route, 304, common)
      return true
    }
    const encoding = body.length >= MIN_COMPRESSED_BYTES ? chooseEncoding(this.req.headers['accept-encoding']) : undefined
    if (encoding === undefined) {
      common.push('etag', etag, 'content-type', contentType)
      this.write(route, 200, common, body)
      return true
    }
    return representation.encoded(encoding).then((encoded) => {
      if (!this.answerable()) return
      common.push('etag', variantEtag(etag, encoding), 'content-type', contentType, 'content-encoding', encoding)
      this.write(route, 200, common, encoded)
    })
  }

  /** Sends the problem `kind` (never stored), after the tier's own `headers`. */
  problem (route: string, kind: ProblemKind, detail: string, headers: HeaderList = []): void {
    const { headers: base, vary } = this.kit.headersFor(this)
    const all = [...base, ...headers, 'content-type', PROBLEM_CONTENT_TYPE, 'cache-control', 'no-store']
    if (vary !== undefined) all.push('vary', vary)
    this.write(route, PROBLEMS[kind].status, all, problemBody(kind, detail))
  }

  /** Sends `body` with `status`, after the tier's own `headers` (which name its type and caching). */
  answer (route: string, status: number, headers: HeaderList, body: Buffer): void {
    const { headers: base, vary } = this.kit.headersFor(this)
    const all = [...base, ...headers]
    if (vary !== undefined) all.push('vary', vary)
    this.write(route, status, all, body)
  }

  /** The framework answers this request after all. */
  handOver (): void {
    this.handed = true
    this.kit.handOver(this)
  }

  private write (route: string, status: number, headers: string[], body?: Buffer): void {
    if (body !== undefined) headers.push('content-length', String(body.length))
    this.res.writeHead(status, headers)
    if (body !== undefined && body.length <= WRITTEN_AS_TEXT_MAX_BYTES) this.res.end(body.toString('latin1'), 'latin1')
    else this.res.end(body)
    this.kit.answered(this, route, status)
  }
}

/**
 * Waits for `pending` (the work a lane started for `exchange`), then answers with `answer`, or,
 * when that declines (false) or the work failed, hands the request over with `pending` recorded
 * in `handed`, where the tier's route finds it instead of doing the work again.
 */
export function settle<T> (exchange: LaneExchange, pending: Promise<T>, handed: WeakMap<IncomingMessage, Promise<T>>, answer: (outcome: T) => boolean | Promise<void>): void {
  const handOver = (): void => {
    handed.set(exchange.req, pending)
    exchange.handOver()
  }
  exchange.untilAnswered()
  pending.then((outcome) => {
    // Its client left (the line saying so is written when it does).
    if (!exchange.answerable()) return
    const answered = answer(outcome)
    if (answered === false) handOver()
    else if (answered !== true) return answered
  }, (err: unknown) => {
    // AbandonedCallError: its client left, and nobody else waited for that work.
    if (!(err instanceof AbandonedCallError)) handOver()
  }).catch(() => {
    // A defect while answering: the framework answers, unless the answer had begun.
    if (exchange.res.headersSent) exchange.res.destroy()
    else handOver()
  })
}

const SECURITY_LIST: HeaderList = Object.entries(SECURITY_HEADERS).flat()

/** CORS headers as a header list, without their `Vary` (merged with the answer's own), and that `Vary`. */
function corsList (corsHeaders: CorsHeaders): { list: HeaderList, vary: string | undefined } {
  const { vary, ...others } = corsHeaders
  return { list: Object.entries(others).flat(), vary }
}

/** The kit of a tier whose answers carry `cors` (undefined: none), and what the tier does with each exchange. */
export function createLaneKit (cors: Cors | undefined, on: Omit<LaneKit, 'headersFor'>): LaneKit {
  // The same CORS headers object (any origin, a listed one, or the refusal) serves many answers: listed once.
  const lists = new WeakMap<CorsHeaders, { list: HeaderList, vary: string | undefined }>()
  return {
    ...on,
    headersFor ({ id, req }) {
      if (cors === undefined) return { headers: [...SECURITY_LIST, 'x-request-id', id], vary: undefined }
      const corsHeaders = cors.headersFor(req.headers.origin)
      let listed = lists.get(corsHeaders)
      if (listed === undefined) lists.set(corsHeaders, listed = corsList(corsHeaders))
      return { headers: [...SECURITY_LIST, 'x-request-id', id, ...listed.list], vary: listed.vary }
    }
  }
}
