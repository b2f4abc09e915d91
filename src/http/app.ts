// What both tiers share as HTTP servers: problem+json for every error the framework or Node can
// raise, 404/405 before the content, request ids, one access-log line per request, security and
// CORS headers, time-outs. Below the framework, src/http/edge.ts gates every request and
// src/http/refusals.ts writes what is refused there.
import { METHODS, type IncomingMessage, type ServerResponse } from 'node:http'
import underPressure from '@fastify/under-pressure'
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { AbandonedCallError } from '../lib/coalescer.js'
import type { ServerOptions } from '../config.js'
import { createAccessLog, type AccessLog } from './access-log.js'
import { ALLOWED_METHODS, requestId, SECURITY_HEADERS } from './answer-headers.js'
import { createCors } from './cors.js'
import { createLaneKit, LaneExchange, type Lane } from './fast-lane.js'
import { carriesBody, edgeServerFactory, MAX_HEAD_BYTES, unmetExpectation } from './edge.js'
import { createRefusals } from './refusals.js'
import type { RequestMetrics } from '../ops/metrics.js'
import { OPERATIONAL_CONFIG } from '../ops/operational-routes.js'
import { problemBody, PROBLEM_CONTENT_TYPE, problemKindForStatus, ProblemError, PROBLEMS, RETRY_AFTER_S, type ProblemKind } from '../contract/problems.js'

export { SECURITY_HEADERS }

export interface HttpAppOptions extends ServerOptions {
  logger: Logger
  /** Route paths (Fastify syntax) that answer GET and HEAD; every other method there gets 405. */
  routes: readonly string[]
  /** Origins allowed to read cross-origin ('*': any; none: no CORS headers, OPTIONS is 405). */
  corsOrigins: '*' | readonly string[]
  /** The paths of the operational routes the app declares (src/ops/operational-routes.ts): their 405s, without CORS. */
  operationalRoutes?: readonly string[]
  /** Observes every answered request but the operational ones; undefined: no request metrics. */
  requestMetrics?: RequestMetrics
  /** Takes the commonest requests of the tier's hottest routes below the framework (src/http/fast-lane.ts). */
  lane?: Lane
}

/**
 * The router's limit on one path parameter. Far above any identifier a route accepts, so that a
 * long one reaches the route's own check (and its own problem), not the router's 414.
 */
const MAX_PARAM_LENGTH = 16_384

/** Largest request body Fastify would read; none is ever read (413 before), this only bounds it. */
const BODY_LIMIT_BYTES = 1024

/**
 * Node enforces the header and request time-outs only when it checks its connections, every
 * 30 s by default: checking every second cuts slow-header (slowloris) clients on time.
 */
const CONNECTIONS_CHECK_MS = 1000

/** While closing, how often connections that fell idle since are dropped. */
const IDLE_REAP_MS = 50

export function sendProblem (reply: FastifyReply, kind: ProblemKind, detail: string, retryAfter?: number | string): FastifyReply {
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
  // Which methods there are, also to a client whose body was refused.
  if (kind === 'method-not-allowed' || kind === 'body-not-allowed') reply.header('allow', ALLOWED_METHODS)
  return reply.code(PROBLEMS[kind].status)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .header('cache-control', 'no-store')
    .send(problemBody(kind, detail))
}

/**
 * Whether the answer to `request` can still be written: its client is still connected. A handler
 * checks it before working for the request (an upstream call, a store read); pipelined requests
 * behind an answer that closes the connection never reach a handler at all (src/http/edge.ts).
 */
export function answerable (request: FastifyRequest): boolean {
  return request.raw.socket?.destroyed !== true
}

function notFound (request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(reply, 'not-found', `No route answers ${request.method} at this path.`)
}

export function buildHttpApp ({ logger, routes, timeouts, loadShedDelayMs, corsOrigins, operationalRoutes = [], requestMetrics, lane }: HttpAppOptions): FastifyInstance {
  const { headersMs, requestMs, keepAliveMs } = timeouts
  const cors = createCors(corsOrigins)
  const refusals = createRefusals({ logger, cors })
  const edge = edgeServerFactory({ refuse: refusals.refuse, refuseConnect: refusals.refuseConnect, shuttingDown: () => closing })
  let closing = false
  // One access line per request, at info (not written at all below it); probes and scrapes at debug.
  const accessLog = createAccessLog(logger, 'info')
  const operationalAccessLog = accessLog === undefined ? undefined : createAccessLog(logger, 'debug')
  // Requests a lane gave to the framework: their id and their time run from when the lane took them.
  const handedOver = new WeakMap<IncomingMessage, LaneExchange>()
  const elapsedMs = (request: FastifyRequest, reply: FastifyReply): number => handedOver.get(request.raw)?.elapsedMs() ?? reply.elapsedTime
  /** The access line of an answered request. */
  function logLine (log: AccessLog | undefined, reqId: string, method: string, url: string, status: number, ms: number): void {
    log?.({ reqId, method, url, status, ms })
  }
  /** The access line of a request whose client left before its answer was written. */
  function logLeft (reqId: string, method: string | undefined, url: string | undefined): void {
    if (accessLog !== undefined) logger.info({ reqId, method, url, aborted: true }, 'request')
  }
  function logAnswered (request: FastifyRequest, reply: FastifyReply, operational = false): void {
    logLine(operational ? operationalAccessLog : accessLog, request.id, request.method, request.url, reply.statusCode, elapsedMs(request, reply))
  }

  /** What every answer carries; set first, so that whatever answers next keeps them. */
  function answerHeaders (request: FastifyRequest, reply: FastifyReply): void {
    reply.headers(SECURITY_HEADERS).header('x-request-id', request.id)
    // Probes and scrapes come from machines, not from pages.
    if (cors !== undefined && request.routeOptions.config.operational !== true) reply.headers(cors.headersFor(request.headers.origin))
  }

  /** Errors the router raises before any route (and any hook) runs. The path is never echoed back. */
  function frameworkErrors (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    answerHeaders(request, reply)
    if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      sendProblem(reply, 'bad-request', `A path segment is longer than ${MAX_PARAM_LENGTH} characters.`)
    } else {
      // FST_ERR_BAD_URL: malformed percent-encoding.
      sendProblem(reply, 'bad-request', 'The request path is not valid percent-encoded UTF-8.')
    }
    logAnswered(request, reply)
    requestMetrics?.observe(undefined, request.method, reply.statusCode, elapsedMs(request, reply))
  }

  /** Fastify's handler, behind `lane` for the requests a lane may take. */
  function laneFirst (handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    if (lane === undefined) return handler
    const kit = createLaneKit(cors, {
      answered (exchange, route, status) {
        const { id, req } = exchange
        const ms = exchange.elapsedMs()
        logLine(accessLog, id, req.method as string, req.url as string, status, ms)
        requestMetrics?.observe(route, req.method as string, status, ms)
      },
      left: ({ id, req }) => { logLeft(id, req.method, req.url) },
      handOver (exchange) {
        handedOver.set(exchange.req, exchange)
        handler(exchange.req, exchange.res)
      }
    })
    /** Whether the lane took the request; a defect in it leaves the request to the framework, logged. */
    function tryLane (exchange: LaneExchange): boolean {
      try {
        return (lane as Lane)(exchange)
      } catch (err) {
        logger.error({ err, reqId: exchange.id }, 'the fast lane failed on a request; the framework answers it')
        if (exchange.res.headersSent) return true
        handedOver.set(exchange.req, exchange)
        return false
      }
    }
    return (req, res) => {
      const { method, headers } = req
      // Load shedding (@fastify/under-pressure) sheds the lane's requests too.
      // A GET only: HEAD, rare, keeps the framework's way of sending no body.
      if (method === 'GET' && !closing && headers.expect === undefined && !carriesBody(headers) &&
        (app as { isUnderPressure?: () => boolean }).isUnderPressure?.() !== true && tryLane(new LaneExchange(req, res, requestId(headers), kit))) return
      handler(req, res)
    }
  }

  const app = Fastify({
    loggerInstance: logger,
    // One access line per request (below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => handedOver.get(req)?.id ?? requestId(req.headers),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    serverFactory: (handler, options) => edge(laneFirst(handler), options),
    clientErrorHandler: refusals.onClientError,
    bodyLimit: BODY_LIMIT_BYTES,
    keepAliveTimeout: keepAliveMs,
    requestTimeout: requestMs,
    // Node's own limit on the head as it counts it (names and values), whatever its command line.
    http: { headersTimeout: headersMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS, maxHeaderSize: MAX_HEAD_BYTES },
    // Answered below as a problem document instead.
    return503OnClosing: false
  }) as unknown as FastifyInstance

  app.addHook('preClose', (done) => {
    closing = true
    // Closing, Node drops only the connections idle at that moment: one whose response is still in
    // flight stays open after it (keep-alive) and held server.close() until the keep-alive time-out,
    // so SIGTERM with requests in flight ended at SHUTDOWN_TIMEOUT_MS with exit 1
    // (test/process/shutdown.test.ts). Drop such connections as soon as they fall idle.
    const reaper = setInterval(() => app.server.closeIdleConnections(), IDLE_REAP_MS).unref()
    app.server.once('close', () => clearInterval(reaper))
    done()
  })

  // Callback-style hooks: no promise per request on the hot path, and one hook where one does:
  // each hook Fastify runs costs a runner and its closures per request.
  app.addHook('onRequest', (request, reply, done) => {
    answerHeaders(request, reply)
    // Answering here ends the request: `done` is then not called.
    if (closing) {
      // A request on a kept-alive connection during shutdown: refuse it and close the connection.
      reply.header('connection', 'close')
      sendProblem(reply, 'shutting-down', 'The server is shutting down; retry on another instance.', RETRY_AFTER_S)
      return
    }
    const bodied = carriesBody(request.headers)
    // A body that is not read cannot be skipped safely on a kept-alive connection: close it.
    if (bodied) reply.header('connection', 'close')
    // The path and the method decide before the content: an unknown path is 404, and a method the
    // route does not have is 405 (answered by the route's own onRequest, which runs next). Only
    // then is an expectation refused (417), or a body (413), before it is read.
    if (request.is404) {
      notFound(request, reply)
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      done()
    } else if (unmetExpectation(request.raw)) {
      sendProblem(reply, 'expectation-failed', 'No expectation other than 100-continue is met here.')
    } else if (bodied) {
      sendProblem(reply, 'body-not-allowed', 'These routes take no request body.')
    } else {
      done()
    }
  })
  if (loadShedDelayMs > 0) {
    // Past this event-loop delay, answering at once with 503 beats queueing without bound.
    app.register(underPressure, {
      maxEventLoopDelay: loadShedDelayMs,
      retryAfter: RETRY_AFTER_S,
      pressureHandler: (_request, reply) => {
        sendProblem(reply, 'overloaded', 'The server is overloaded; try again shortly.', RETRY_AFTER_S)
      }
    })
  }
  const logsRequests = accessLog !== undefined
  if (logsRequests || requestMetrics !== undefined) {
    app.addHook('onResponse', (request, reply, done) => {
      const { url: route, config } = request.routeOptions
      const operational = config.operational === true
      if (logsRequests) logAnswered(request, reply, operational)
      if (!operational) requestMetrics?.observe(route, request.method, reply.statusCode, elapsedMs(request, reply))
      done()
    })
  }
  if (logsRequests) {
    // A client that leaves before its answer is written: its request still leaves its line.
    app.addHook('onRequestAbort', (request, done) => {
      logLeft(request.id, request.method, request.url)
      done()
    })
  }

  app.setErrorHandler((err: FastifyError | ProblemError, request, reply) => {
    // Its client is gone and nobody else waited for that work: there is no one to answer (the
    // access line says the client left).
    if (err instanceof AbandonedCallError) return reply.hijack()
    if (err instanceof ProblemError) {
      if (err.status >= 500) request.log.warn({ err }, err.message)
      return sendProblem(reply, err.kind, err.message, err.retryAfter)
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500
    if (status >= 500) {
      request.log.error({ err }, 'unhandled error')
      return sendProblem(reply, 'internal', 'The server failed to answer this request.')
    }
    return sendProblem(reply, problemKindForStatus(status), err.message)
  })
  app.setNotFoundHandler(notFound)

  // Every method Node's parser knows reaches the router, so that an extension method (PROPFIND,
  // PURGE…) on a route's path is its 405, not a 404. CONNECT never does (the edge answers it).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method)
  }
  const otherMethods = app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD')
  const operational = new Set(operationalRoutes)
  for (const url of [...routes, ...operational]) {
    app.route({
      method: otherMethods,
      url,
      config: operational.has(url) ? OPERATIONAL_CONFIG : {},
      // Answered in onRequest, before the body is looked at (preParsing).
      onRequest: async (request, reply) => {
        const { origin, 'access-control-request-method': preflight } = request.headers
        if (cors !== undefined && !operational.has(url) && request.method === 'OPTIONS' && origin !== undefined && preflight !== undefined) {
          // A CORS preflight (a body on it, unread, closes the connection as elsewhere).
          return reply.code(204).headers(cors.preflightHeaders(request.headers['access-control-request-headers'])).send()
        }
        return sendProblem(reply, 'method-not-allowed', `${request.method} is not allowed here; use GET or HEAD.`)
      },
      handler: async () => undefined
    })
  }
  return app
}
