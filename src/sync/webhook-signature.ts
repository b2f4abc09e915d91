// Standard Webhooks signatures (HMAC-SHA256): what lets a receiver trust that a webhook comes
// from us, unchanged, and recently. https://github.com/standard-webhooks/standard-webhooks
import { createHmac } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * The key in a `whsec_…` secret (base64 of 24 to 64 random bytes, as the specification asks and
 * its libraries expect). Throws a RangeError saying what is wrong, never echoing the secret.
 */
export function parseWebhookSecret (secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new RangeError(`a webhook secret starts with ${SECRET_PREFIX}`)
  const encoded = secret.slice(SECRET_PREFIX.length)
  if (!BASE64.test(encoded)) throw new RangeError(`a webhook secret is ${SECRET_PREFIX} followed by base64`)
  const key = Buffer.from(encoded, 'base64')
  if (key.length < 24 || key.length > 64) throw new RangeError(`a webhook secret holds 24 to 64 bytes (this one: ${key.length})`)
  return key
}

export interface WebhookHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/**
 * The headers of one attempt: the signature covers `id.timestamp.body`, so neither can be
 * replayed with another; one signature per key (several while a secret is being rotated).
 * `id` must hold no `.` (ours are state tokens).
 */
export function signWebhook (keys: readonly Buffer[], id: string, timestampS: number, body: string): WebhookHeaders {
  const content = `${id}.${timestampS}.${body}`
  const signatures = keys.map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`)
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampS), 'webhook-signature': signatures.join(' ') }
}
