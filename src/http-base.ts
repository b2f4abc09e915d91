// What both tiers share as HTTP servers: problem+json for every error the framework or Node can
// raise, 404/405, request ids, one access-log line per request, security headers, time-outs.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { problemDocument, problemKindForStatus, ProblemError, PROBLEMS, type ProblemKind } from './problems.js'

export interface HttpAppOptions {
  logger: Logger
  /** Route paths (Fastify syntax) that answer GET and HEAD; every other method there gets 405. */
  routes: readonly string[]
}

export const ALLOWED_METHODS = 'GET, HEAD'

/** A client-supplied request id is kept only when it is short and inert (no log or header injection). */
const REQUEST_ID = /^[\w.-]{1,128}$/

function requestId (req: IncomingMessage): string {
  const header = req.headers['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

// OWASP REST Security Cheat Sheet headers for API responses (Fastify never sends X-Powered-By).
const SECURITY_HEADERS = {
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
  const kind: ProblemKind = err.code === 'HPE_HEADER_OVERFLOW' ? 'headers-too-large' : 'bad-request'
  const detail = kind === 'headers-too-large' ? 'The request line and headers exceed 16 KiB.' : 'The request is not valid HTTP/1.1.'
  const body = JSON.stringify(problemDocument(kind, detail))
  socket.end(`HTTP/1.1 ${kind === 'headers-too-large' ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
    'Content-Type: application/problem+json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n' +
    `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
}

function frameworkErrors (err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendProblem(reply, 'invalid-slug', 'The slug is longer than 200 characters.')
  } else {
    // FST_ERR_BAD_URL: malformed percent-encoding. The path is not echoed back.
    sendProblem(reply, 'bad-request', 'The request path is not valid percent-encoded UTF-8.')
  }
}

export function buildHttpApp ({ logger, routes }: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    // One access line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestId,
    // A slug of any length the server accepts must reach our own check (400), not the router's 414.
    routerOptions: { maxParamLength: 16_384 },
    frameworkErrors,
    clientErrorHandler,
    // GET-only API: any request body is refused before it is read.
    bodyLimit: 1024,
    // Longer than any load balancer's idle time-out (AWS ALB: 60 s), so the LB closes first.
    keepAliveTimeout: 72_000,
    requestTimeout: 30_000
  }) as unknown as FastifyInstance
  // Slow-header (slowloris) clients are cut after 10 s instead of Node's 60 s.
  app.server.headersTimeout = 10_000

  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header('x-request-id', request.id)
    done()
  })
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
  app.setNotFoundHandler((request, reply) => {
    sendProblem(reply, 'not-found', `No route answers ${request.method} at this path.`)
  })

  const otherMethods = app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD')
  for (const url of routes) {
    app.route({
      method: otherMethods,
      url,
      // Answered in onRequest, before any body is read.
      onRequest: async (request, reply) => {
        reply.header('allow', ALLOWED_METHODS)
        return sendProblem(reply, 'method-not-allowed', `${request.method} is not allowed here; use GET or HEAD.`)
      },
      handler: async () => undefined
    })
  }
  return app
}
