// HTTP as clients send it: undici for ordinary requests, and `app.inject()` answers in the same
// shape (raw bytes on a socket: raw-http.ts).
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
