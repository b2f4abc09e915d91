// The HTTP edge both tiers share, below the framework: Node's server, and a gate every parsed
// request passes before any route sees it. The gate holds what RFC 9112 and our limits demand of
// a request as such (its version, its Host, the size and count of its header fields), and keeps
// pipelining honest: once an answer that closes the connection is decided, nothing behind it
// on that socket is dispatched, since its answer could never be written.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyServerFactory } from 'fastify'
import type { ProblemKind } from '../contract/problems.js'

/** Header fields a request may have; one more is refused with 431 (Apache's LimitRequestFields default). */
const MAX_HEADER_FIELDS = 100
/** Bytes of the request line and header fields a request may have (Node's own limit); more is 431. */
export const MAX_HEAD_BYTES = 16 * 1024

// Bytes a request head takes beyond its method, target and field names and values (what Node's
// parser counts), written the shortest way: ` `, ` HTTP/1.1` and CRLF on the request line, `:`
// and CRLF per field, the final CRLF. Optional whitespace around a value and empty lines before
// a request line are counted by no one: the parser skips them without storing them, and
// HEADERS_TIMEOUT_MS bounds a head that carries them, as it bounds any slow client (the decision
// and the balancer's limits: docs/decisions.md).
const REQUEST_LINE_BYTES = 1 + 9 + 2
const FIELD_BYTES = 1 + 2
const END_BYTES = 2

/** RFC 9112 §3.2: uri-host (reg-name or IP literal) and an optional port. */
const HOST = /^(?:[\w.~!$&'()*+,;=%-]*|\[[\d.:A-Za-z]+\])(?::\d*)?$/
/** Node's own test for `Expect: 100-continue` (node/lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i
const ZEROS = /^0+$/

export type Refusal = readonly [kind: ProblemKind, detail: string]

const NO_VERSION: Refusal = ['bad-request', 'The request line has no HTTP version (HTTP/0.9 is not served).']
const VERSION_NOT_SUPPORTED: Refusal = ['http-version-not-supported', 'Only HTTP/1.0 and HTTP/1.1 are served.']
const TOO_MANY_FIELDS: Refusal = ['headers-too-large', `The request has more than ${MAX_HEADER_FIELDS} header fields.`]
const TOO_LARGE: Refusal = ['headers-too-large', 'The request line and headers exceed 16 KiB.']
const NO_HOST: Refusal = ['bad-request', 'An HTTP/1.1 request needs a Host header.']
const DUPLICATE_HOST: Refusal = ['bad-request', 'The request has more than one Host header.']
const INVALID_HOST: Refusal = ['bad-request', 'The Host header is not a host and port.']

/**
 * What is wrong with a parsed request as such, whatever its route, or undefined. One pass over
 * its raw header fields: Node keeps only the first `Host` and counts only part of the head.
 */
function refusalOf (req: IncomingMessage): Refusal | undefined {
  const major = req.httpVersionMajor
  // Node's parser refuses 1.x other than 1.0 and 1.1, and any other major version but 2.0 itself.
  if (major !== 1) return major === 0 ? NO_VERSION : VERSION_NOT_SUPPORTED
  const raw = req.rawHeaders
  if (raw.length > 2 * MAX_HEADER_FIELDS) return TOO_MANY_FIELDS
  let bytes = (req.method?.length ?? 0) + (req.url?.length ?? 0) + REQUEST_LINE_BYTES + END_BYTES
  let hosts = 0
  let host = ''
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string
    const value = raw[i + 1] as string
    bytes += name.length + value.length + FIELD_BYTES
    if (isHost(name)) {
      hosts++
      host = value
    }
  }
  if (bytes > MAX_HEAD_BYTES) return TOO_LARGE
  if (hosts > 1) return DUPLICATE_HOST
  if (hosts === 0) return req.httpVersionMinor === 1 ? NO_HOST : undefined
  return HOST.test(host) ? undefined : INVALID_HOST
}

/** `name` is `Host` in any case, compared without making a lower-case copy (this runs per field). */
function isHost (name: string): boolean {
  return name.length === 4 && (name.charCodeAt(0) | 0x20) === 0x68 && (name.charCodeAt(1) | 0x20) === 0x6f &&
    (name.charCodeAt(2) | 0x20) === 0x73 && (name.charCodeAt(3) | 0x20) === 0x74
}

/** `Content-Length` other than zero (in any spelling: `0`, `00`…), or any `Transfer-Encoding`: the request carries a body. */
export function carriesBody (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  if (length !== undefined) return length !== '0' && !ZEROS.test(length)
  return headers['transfer-encoding'] !== undefined
}

/** An `Expect` other than 100-continue on HTTP/1.1, which Node leaves to us (RFC 9110 §10.1.1: 417). */
export function unmetExpectation (req: IncomingMessage): boolean {
  const expect = req.headers.expect
  return expect !== undefined && req.httpVersionMinor === 1 && !CONTINUE.test(expect)
}

/** Sockets on which an answer closing the connection has been decided. */
const closingSockets = new WeakSet<Socket>()

export function markClosing (socket: Socket): void {
  closingSockets.add(socket)
}

export function isClosing (socket: Socket): boolean {
  return closingSockets.has(socket)
}

export interface EdgeOptions {
  /** Answers a request the gate refuses (a problem, closing the connection). */
  refuse: (req: IncomingMessage, res: ServerResponse, refusal: Refusal) => void
  /** Answers a CONNECT, which never reaches the framework. */
  refuseConnect: (req: IncomingMessage, socket: Socket) => void
  /** The app is shutting down: every answer closes its connection. */
  shuttingDown: () => boolean
}

/**
 * Fastify's server, built by us so that the gate runs first: Node's own answers (an empty 400
 * for a missing Host, an empty 417, `100 Continue` before we decide) are turned off and taken
 * over, and Node keeps just one header field more than we allow, so that we can count them.
 */
export function edgeServerFactory ({ refuse, refuseConnect, shuttingDown }: EdgeOptions): FastifyServerFactory {
  return (handler, options) => {
    function gate (req: IncomingMessage, res: ServerResponse): void {
      const socket = req.socket
      // Behind an answer that closes the connection: never answered, so never worked on.
      if (closingSockets.has(socket)) return
      const refusal = refusalOf(req)
      if (refusal !== undefined) return refuse(req, res, refusal)
      // Decided now, before the parser hands over the next pipelined request: a body is never
      // read (404, 405, 413 or 417, then close), and a client may ask to close.
      if (!res.shouldKeepAlive || carriesBody(req.headers) || shuttingDown()) closingSockets.add(socket)
      handler(req, res)
    }
    const server = createServer({ ...options.http as object, requireHostHeader: false }, gate)
    server.maxHeadersCount = MAX_HEADER_FIELDS + 1
    // What Fastify sets on a server it makes itself.
    server.keepAliveTimeout = options.keepAliveTimeout as number
    server.requestTimeout = options.requestTimeout as number
    server.setTimeout(options.connectionTimeout as number)
    // Expect: 100-continue comes here instead of Node sending `100 Continue` (inviting a body we
    // refuse). Node closes the connection after the answer, the client being free to send the
    // body anyway. Any other expectation comes here instead of Node's empty 417.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (!closingSockets.has(req.socket)) {
        gate(req, res)
        closingSockets.add(req.socket)
      }
    })
    server.on('checkExpectation', gate)
    server.on('connect', refuseConnect)
    return server satisfies Server
  }
}
