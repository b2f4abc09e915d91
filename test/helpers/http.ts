// HTTP as clients send it: undici for ordinary requests, a raw socket for paths that every
// client library would normalise (dot segments, backslashes, raw bytes).
import { connect } from 'node:net'
import type { LightMyRequestResponse as InjectResponse } from 'fastify'
import { request as undiciRequest } from 'undici'

export interface TestResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: () => unknown
}

export async function get (base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> {
  const response = await undiciRequest(new URL(path, base), { method: method as 'GET', headers })
  const text = await response.body.text()
  return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) }
}

/** An `app.inject()` answer in the same shape, for route-level cases with no socket under test. */
export function fromInject (response: InjectResponse): TestResponse {
  return { status: response.statusCode, headers: response.headers as TestResponse['headers'], text: response.body, json: () => response.json() }
}

/** Sends `GET <rawPath> HTTP/1.1` byte for byte and parses the one response. */
export async function rawGet (port: number, rawPath: string | Buffer): Promise<TestResponse> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer for ${String(rawPath)}`)))
    socket.on('connect', () => {
      socket.write(Buffer.concat([Buffer.from('GET '), Buffer.from(rawPath), Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')]))
    })
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const response = Buffer.concat(chunks).toString('utf8')
      const [head = '', ...rest] = response.split('\r\n\r\n')
      const [statusLine = '', ...headerLines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      const text = rest.join('\r\n\r\n')
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text, json: () => JSON.parse(text) })
    })
  })
}
