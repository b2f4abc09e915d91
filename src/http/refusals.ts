// Answers written outside the framework: the edge's refusals of a parsed request (before any
// route sees it), Node's parser's refusals (no request at all, only a socket) and CONNECT. Each
// is a problem document with the headers of any other answer (security, request id, CORS),
// closes the connection, and leaves one log line with its request id.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import { problemBody, PROBLEM_CONTENT_TYPE, PROBLEMS, type ProblemKind } from '../contract/problems.js'
import { ALLOWED_METHODS, requestId, SECURITY_HEADERS } from './answer-headers.js'
import type { Cors } from './cors.js'
import { isClosing, markClosing, type Refusal } from './edge.js'

/** Node's parser error, as `clientError` hands it over. */
type ParserError = Error & { code?: string, reason?: string, rawPacket?: unknown, bytesParsed?: number }

export interface Refusals {
  refuse: (req: IncomingMessage, res: ServerResponse, refusal: Refusal) => void
  refuseConnect: (req: IncomingMessage, socket: Socket) => void
  /** Fastify's `clientErrorHandler`. */
  onClientError: (err: ParserError, socket: Socket) => void
}

/** A request line whose method is a token Node's parser does not know: 405, not a malformed request. */
const TOKEN_METHOD_LINE = /^[!#$%&'*+.^`|~\w-]+ [^\s]+ HTTP\/\d\.\d\r?$/
/** Longest URL written in a log line. */
const LOGGED_URL_LENGTH = 512

function refusalOfParserError (err: ParserError): Refusal {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['headers-too-large', 'The request line and headers exceed 16 KiB.']
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['request-timeout', 'The request was not received in time.']
    case 'HPE_INVALID_VERSION':
      // A well-formed version we do not speak (HTTP/1.2, HTTP/3.0); anything else is malformed.
      if (err.reason === 'Invalid HTTP version') return ['http-version-not-supported', 'Only HTTP/1.0 and HTTP/1.1 are served.']
      break
    case 'HPE_INVALID_METHOD':
      if (TOKEN_METHOD_LINE.test(failingLine(err))) return ['method-not-allowed', 'Only GET and HEAD are allowed here.']
      break
  }
  return ['bad-request', 'The request is not valid HTTP/1.1.']
}

/** The line of the packet where the parser stopped (a pipelined request may precede it). */
function failingLine ({ rawPacket, bytesParsed }: ParserError): string {
  if (!Buffer.isBuffer(rawPacket)) return ''
  const at = Math.min(bytesParsed ?? 0, rawPacket.length)
  const start = rawPacket.lastIndexOf(0x0a, at - 1) + 1
  const end = rawPacket.indexOf(0x0a, at)
  return rawPacket.toString('latin1', start, end === -1 ? Math.min(rawPacket.length, start + 8192) : end)
}

/**
 * Writes `answer` once the answers in flight on `socket` are written (pipelined requests before
 * the one refused are answered first, in order), then closes the connection as Node does.
 */
function writeWhenIdle (socket: Socket, answer: Buffer): void {
  // Node's own record of the response that owns the socket now; the next queued one takes it
  // over before this one's 'close' (node/lib/_http_server.js, resOnFinish).
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (inFlight != null) {
    inFlight.once('close', () => writeWhenIdle(socket, answer))
    return
  }
  if (!socket.writable) return
  socket.end(answer)
  socket.destroySoon()
}

export function createRefusals ({ logger, cors }: { logger: Logger, cors: Cors | undefined }): Refusals {
  function headersOf (kind: ProblemKind, id: string, body: Buffer, origin: string | undefined): OutgoingHttpHeaders {
    return {
      ...SECURITY_HEADERS,
      ...cors?.headersFor(origin),
      ...(kind === 'method-not-allowed' ? { allow: ALLOWED_METHODS } : {}),
      'x-request-id': id,
      'content-type': PROBLEM_CONTENT_TYPE,
      'content-length': body.length,
      'cache-control': 'no-store',
      connection: 'close'
    }
  }

  /** The whole answer as bytes, for a socket no ServerResponse owns. */
  function rawAnswer (kind: ProblemKind, detail: string, id: string, origin: string | undefined): Buffer {
    const { status } = PROBLEMS[kind]
    const body = problemBody(kind, detail)
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ndate: ${new Date().toUTCString()}\r\n`
    for (const [name, value] of Object.entries(headersOf(kind, id, body, origin))) head += `${name}: ${String(value)}\r\n`
    return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body])
  }

  function onClientError (err: ParserError, socket: Socket): void {
    // Not a refusal: the client went away (or broke the connection) mid-request.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    // An answer closing the connection is decided already (the parser found the error in
    // bytes after it), or this socket's error was answered: nothing more is said.
    if (isClosing(socket)) return
    markClosing(socket)
    const [kind, detail] = refusalOfParserError(err)
    const id = randomUUID()
    writeWhenIdle(socket, rawAnswer(kind, detail, id, undefined))
    logger.info({ reqId: id, status: PROBLEMS[kind].status, parserError: err.code }, 'request')
  }

  return {
    onClientError,

    refuse (req, res, [kind, detail]) {
      markClosing(req.socket)
      const id = requestId(req.headers)
      const body = problemBody(kind, detail)
      res.writeHead(PROBLEMS[kind].status, headersOf(kind, id, body, req.headers.origin))
      res.end(body)
      logger.info({ reqId: id, method: req.method, url: req.url?.slice(0, LOGGED_URL_LENGTH), status: res.statusCode }, 'request')
    },

    refuseConnect (req, socket) {
      // The parser let go of this socket: its errors are ours now.
      socket.on('error', () => socket.destroy())
      markClosing(socket)
      const id = requestId(req.headers)
      writeWhenIdle(socket, rawAnswer('method-not-allowed', 'CONNECT is not allowed here; use GET or HEAD.', id, req.headers.origin))
      logger.info({ reqId: id, method: req.method, url: req.url?.slice(0, LOGGED_URL_LENGTH), status: 405 }, 'request')
    }
  }
}
