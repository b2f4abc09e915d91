// What both tiers share as HTTP servers: problem+json for every error the framework or Node can
// raise, 404/405, request ids, one access-log line per request, security headers, time-outs.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import underPressure from '@fastify/under-pressure'
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { ServerOptions } from './config.js'
import { problemDocument, problemKindForStatus, ProblemError, PROBLEMS, RETRY_AFTER_S, type ProblemKind } from './problems.js'

export interface HttpAppOptions extends ServerOptions {
  logger: Logger
  /** Route paths (Fastify syntax) that answer GET and HEAD; every other method there gets 405. */
  routes: readonly string[]
  /** OPTIONS is answered by a CORS plugin, not with 405. */
  corsPreflight: boolean
}

const ALLOWED_METHODS = 'GET, HEAD'

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

/** A client-supplied request id is kept only when it is short and inert (no log or header injection). */
const REQUEST_ID = /^[\w.-]{1,128}$/

function requestId (req: IncomingMessage): string {
  const header = req.headers['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

// OWASP REST Security Cheat Sheet headers for API responses (Fastify never sends X-Powered-By).
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'cross-origin'
} as const

// Problem bodies are few and constant (details never echo input): serialise each once.
const problemBodies = new Map<string, string>()

function problemBody (kind: ProblemKind, detail: string): string {
  const key = `${kind}\n${detail}`
  let body = problemBodies.get(key)
  if (body === undefined) {
    body = JSON.stringify(problemDocument(kind, detail))
    if (problemBodies.size < 1000) problemBodies.set(key, body)
  }
  return body
}

export function sendProblem (reply: FastifyReply, kind: ProblemKind, detail: string, retryAfter?: number | string): FastifyReply {
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
  return reply.code(PROBLEMS[kind].status)
    .header('content-type', 'application/problem+json')
    .header('cache-control', 'no-store')
    .send(problemBody(kind, detail))
}

/** Errors Node's HTTP parser raises before Fastify sees a request: answered on the raw socket. */
function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const [kind, statusLine, detail]: [ProblemKind, string, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers-too-large', '431 Request Header Fields Too Large', 'The request line and headers exceed 16 KiB.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['request-timeout', '408 Request Timeout', 'The request was not received in time.']
        : ['bad-request', '400 Bad Request', 'The request is not valid HTTP/1.1.']
  const body = JSON.stringify(problemDocument(kind, detail))
  socket.end(`HTTP/1.1 ${statusLine}\r\n` +
    'Content-Type: application/problem+json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n' +
    `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
}

/** Errors the router raises before any route runs. The path is never echoed back. */
function frameworkErrors (err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendProblem(reply, 'bad-request', `A path segment is longer than ${MAX_PARAM_LENGTH} characters.`)
  } else {
    // FST_ERR_BAD_URL: malformed percent-encoding.
    sendProblem(reply, 'bad-request', 'The request path is not valid percent-encoded UTF-8.')
  }
}

/** `Content-Length` other than 0, or any `Transfer-Encoding`: the request carries a body. */
function hasBody (request: FastifyRequest): boolean {
  const length = request.headers['content-length']
  return length !== undefined ? length !== '0' : request.headers['transfer-encoding'] !== undefined
}

function notFound (request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(reply, 'not-found', `No route answers ${request.method} at this path.`)
}

export function buildHttpApp ({ logger, routes, timeouts, loadShedDelayMs, corsPreflight }: HttpAppOptions): FastifyInstance {
  const { headersMs, requestMs, keepAliveMs } = timeouts
  const app = Fastify({
    loggerInstance: logger,
    // One access line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestId,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    bodyLimit: BODY_LIMIT_BYTES,
    keepAliveTimeout: keepAliveMs,
    requestTimeout: requestMs,
    http: { headersTimeout: headersMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    // Answered below as a problem document instead.
    return503OnClosing: false
  }) as unknown as FastifyInstance

  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    // Closing, Node drops only the connections idle at that moment: one whose response is still in
    // flight stays open after it (keep-alive) and held server.close() until the keep-alive time-out,
    // so SIGTERM with requests in flight ended at SHUTDOWN_TIMEOUT_MS with exit 1
    // (test/shutdown.test.ts). Drop such connections as soon as they fall idle.
    const reaper = setInterval(() => app.server.closeIdleConnections(), IDLE_REAP_MS).unref()
    app.server.once('close', () => clearInterval(reaper))
    done()
  })

  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header('x-request-id', request.id)
    // Answering here ends the request: `done` is then not called.
    if (closing) {
      // A request on a kept-alive connection during shutdown: refuse it and close the connection.
      reply.header('connection', 'close')
      sendProblem(reply, 'shutting-down', 'The server is shutting down; retry on another instance.', RETRY_AFTER_S)
    } else {
      // A body that is not read cannot be skipped safely on a kept-alive connection: close it.
      if (hasBody(request)) reply.header('connection', 'close')
      done()
    }
  })
  // The path and the method decide before the content: an unknown path is 404 and a method the
  // route does not have is 405 (both answered in onRequest, with CORS headers when CORS is on),
  // whatever the body. Only then is a body refused, before it is read (preParsing precedes it).
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.is404) {
      notFound(request, reply)
    } else if (hasBody(request)) {
      sendProblem(reply, 'body-not-allowed', 'These routes take no request body.')
    } else {
      done(null, payload)
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
  if (logger.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request')
      done()
    })
  }

  app.setErrorHandler((err: FastifyError | ProblemError, request, reply) => {
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

  const otherMethods = app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD' && !(corsPreflight && m === 'OPTIONS'))
  for (const url of routes) {
    app.route({
      method: otherMethods,
      url,
      // Answered in onRequest, before the body is looked at (preParsing).
      onRequest: async (request, reply) => {
        reply.header('allow', ALLOWED_METHODS)
        return sendProblem(reply, 'method-not-allowed', `${request.method} is not allowed here; use GET or HEAD.`)
      },
      handler: async () => undefined
    })
  }
  return app
}
