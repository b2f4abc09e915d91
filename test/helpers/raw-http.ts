// The tests' one raw HTTP/1.1 client, on a `net` socket, for what every client library would
// normalise or refuse (dot segments, backslashes, raw bytes, bodies on GET, pipelining): a
// one-shot request answered by its first response, a one-shot exchange that reads every response
// until the server closes, the same for any bytes (pipelined, malformed), and a keep-alive
// client (thousands of fuzzed requests per second on one socket).
import { connect, type Socket } from 'node:net'
import type { TestResponse } from './http.js'

export interface RawResponse {
  status: number
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>
  body: Buffer
}

const HEAD_END = Buffer.from('\r\n\r\n')

/**
 * The first complete response at the start of `buffer` and the bytes after it, or undefined when
 * more bytes are needed. Without Content-Length the body runs to the end of the connection, so
 * it is complete only once `ended`. `bodiless`: it answers a HEAD (1xx, 204 and 304 never have a body).
 */
function parseResponse (buffer: Buffer, ended: boolean, bodiless = false): { response: RawResponse, rest: Buffer } | undefined {
  const headEnd = buffer.indexOf(HEAD_END)
  if (headEnd === -1) return undefined
  const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n')
  const match = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine)
  if (match === null) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`)
  const status = Number(match[1])
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line)}`)
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  // The servers under test send whole bodies with a length; chunked framing would be a change to notice.
  if (headers['transfer-encoding'] !== undefined) throw new Error(`unexpected Transfer-Encoding: ${headers['transfer-encoding']}`)
  const start = headEnd + HEAD_END.length
  if (bodiless || status < 200 || status === 204 || status === 304) {
    return { response: { status, headers, body: Buffer.alloc(0) }, rest: buffer.subarray(start) }
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length'])
  if (length === undefined) {
    if (!ended) return undefined
    return { response: { status, headers, body: buffer.subarray(start) }, rest: Buffer.alloc(0) }
  }
  if (buffer.length < start + length) return undefined
  return { response: { status, headers, body: buffer.subarray(start, start + length) }, rest: buffer.subarray(start + length) }
}

/** Every response in `buffer`, read to the end of the connection; `heads[i]`: the i-th answers a HEAD. */
function parseResponses (buffer: Buffer, heads: readonly boolean[] = []): RawResponse[] {
  const responses: RawResponse[] = []
  let rest = buffer
  while (rest.length > 0) {
    const next = parseResponse(rest, true, heads[responses.length] === true)
    if (next === undefined) throw new Error(`not a whole HTTP response: ${JSON.stringify(rest.toString('latin1', 0, 200))}`)
    responses.push(next.response)
    rest = next.rest
  }
  return responses
}

const requestBytes = (target: Buffer, extraHeaders: string): Buffer =>
  Buffer.concat([Buffer.from('GET '), target, Buffer.from(` HTTP/1.1\r\nHost: 127.0.0.1\r\n${extraHeaders}\r\n`)])

/** A raw response in the shape of the other clients' answers (for assertProblem and the like). */
export function asTestResponse ({ status, headers, body }: RawResponse): TestResponse {
  const text = body.toString('utf8')
  return { status, headers, text, json: () => JSON.parse(text) }
}

/**
 * Writes `bytes` as they are and resolves with the first whole response, then drops the socket
 * (it may stay open otherwise, as a slow client's would).
 */
export async function rawRequest (port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes))
    let buffer = Buffer.alloc(0)
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    socket.on('error', reject)
    const settle = (ended: boolean): void => {
      const parsed = parseResponse(buffer, ended)
      if (parsed === undefined) {
        if (ended) reject(new Error(`no whole response: ${buffer.toString('latin1')}`))
        return
      }
      socket.destroy()
      resolve(parsed.response)
    }
    // A response that does not parse fails the request, not the process.
    const settleOrFail = (ended: boolean): void => {
      try {
        settle(ended)
      } catch (err) {
        socket.destroy()
        reject(err)
      }
    }
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      settleOrFail(false)
    })
    socket.on('end', () => settleOrFail(true))
  })
}

/** `GET <target>` byte for byte with `Connection: close`, answered as the other clients' answers. */
export async function rawGet (port: number, target: string | Buffer): Promise<TestResponse> {
  return asTestResponse(await rawRequest(port, requestBytes(Buffer.from(target), 'Connection: close\r\n')))
}

/**
 * Sends one `GET <target>` with `Connection: close` and parses every response the server wrote
 * before closing. A target holding CR/LF may frame several requests, hence several responses.
 */
export async function rawExchange (port: number, target: Buffer, timeoutMs = 5000): Promise<RawResponse[]> {
  return (await rawSession(port, requestBytes(target, 'Connection: close\r\n'), { timeoutMs })).responses
}

export interface RawSession {
  /** Every response, in order, parsed to the end of the connection. */
  responses: RawResponse[]
  /** Everything the server wrote. */
  bytes: Buffer
}

/** Pause between the pieces of a session's bytes, so that the server most likely reads each apart. */
const PIECE_PAUSE_MS = 20

/**
 * Writes `bytes` (any number of pipelined requests, well-formed or not), at once or, given
 * pieces, one piece at a time with a pause between them, and parses every response the server
 * writes until it closes the connection; rejects if it has not closed within `timeoutMs`.
 * `heads[i]`: the i-th response answers a HEAD (so it has no body).
 */
export async function rawSession (port: number, bytes: string | Buffer | ReadonlyArray<string | Buffer>, { heads = [], timeoutMs = 5000 }: { heads?: readonly boolean[], timeoutMs?: number } = {}): Promise<RawSession> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(timeoutMs, () => {
      const received = Buffer.concat(chunks).toString('latin1', 0, 2000)
      socket.destroy(new Error(`the server did not close within ${timeoutMs} ms; received ${JSON.stringify(received)}`))
    })
    const pieces = typeof bytes === 'string' || Buffer.isBuffer(bytes) ? [bytes] : [...bytes]
    const writeNext = (): void => {
      const piece = pieces.shift()
      if (piece === undefined || socket.destroyed) return
      socket.write(piece, () => { if (pieces.length > 0) setTimeout(writeNext, PIECE_PAUSE_MS) })
    }
    socket.setNoDelay(true)
    socket.on('connect', writeNext)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    // A reset after the server answered and closed (it may not read all we sent) still leaves the answer.
    let failure: Error | undefined
    socket.on('error', (err) => { if (chunks.length === 0 || err.message.startsWith('the server did not close')) failure = err })
    socket.on('close', () => {
      if (failure !== undefined) return reject(failure)
      try {
        const all = Buffer.concat(chunks)
        resolve({ responses: parseResponses(all, heads), bytes: all })
      } catch (err) {
        reject(err)
      }
    })
  })
}

/**
 * One keep-alive connection, one request at a time. When the server says `Connection: close`
 * or closes (as Node does after a request its parser rejects), the next request reconnects.
 * Targets must not hold CR or LF: those could frame a second request and desynchronise it.
 */
export class RawKeepAliveClient {
  readonly #port: number
  #socket: Socket | undefined
  #buffer: Buffer = Buffer.alloc(0)
  #ended = false
  #waiting: (() => void) | undefined
  /** Connections opened so far (the fuzz test reports how often the server closed). */
  connections = 0

  constructor (port: number) {
    this.#port = port
  }

  async get (target: Buffer, timeoutMs = 5000): Promise<RawResponse> {
    if (target.includes(0x0d) || target.includes(0x0a)) throw new Error('CR/LF in a keep-alive target: use rawExchange')
    const reused = this.#socket !== undefined
    try {
      return await this.#send(target, timeoutMs)
    } catch (err) {
      // The keep-alive race: a reused socket the server had just closed. Retry once, fresh.
      if (!reused || (err as { answered?: boolean }).answered === true) throw err
      this.close()
      return await this.#send(target, timeoutMs)
    }
  }

  close (): void {
    this.#socket?.destroy()
    this.#socket = undefined
  }

  async #send (target: Buffer, timeoutMs: number): Promise<RawResponse> {
    const socket = this.#socket ?? await this.#connect()
    socket.write(requestBytes(target, ''))
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const next = parseResponse(this.#buffer, this.#ended)
      if (next !== undefined) {
        this.#buffer = next.rest
        if (next.response.headers.connection?.toLowerCase() === 'close' || this.#ended) this.close()
        return next.response
      }
      if (this.#ended) {
        const answered = this.#buffer.length > 0
        this.close()
        throw Object.assign(new Error(`connection closed before a whole response (${this.#buffer.length} bytes)`), { answered })
      }
      const remaining = deadline - Date.now()
      if (remaining <= 0) {
        this.close()
        throw Object.assign(new Error(`no answer within ${timeoutMs} ms for ${JSON.stringify(target.toString('latin1'))}`), { answered: true })
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining)
        this.#waiting = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }

  async #connect (): Promise<Socket> {
    const socket = connect(this.#port, '127.0.0.1')
    socket.setNoDelay(true)
    this.#buffer = Buffer.alloc(0)
    this.#ended = false
    const wake = (): void => {
      const waiting = this.#waiting
      this.#waiting = undefined
      waiting?.()
    }
    socket.on('data', (chunk: Buffer) => {
      if (this.#socket !== socket) return
      this.#buffer = Buffer.concat([this.#buffer, chunk])
      wake()
    })
    // An error (reset) ends the connection like a close: what arrived before it is still parsed.
    socket.on('error', () => {})
    socket.on('close', () => {
      if (this.#socket !== socket) return
      this.#ended = true
      wake()
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    this.#socket = socket
    this.connections++
    return socket
  }
}
