// Preview tokens: a link that shows one post, published or not, until it expires. The token is
// the expiry and an HMAC-SHA256, keyed with PREVIEW_SECRET, over the slug and that expiry: only
// whoever holds the secret (the post API, and the `preview-url` command) can make one, and it
// opens that slug only.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** The longest token accepted (an expiry in seconds, a dot, a 43-character signature). */
const MAX_TOKEN_LENGTH = 64

function signature (secret: string, slug: string, expiresS: number): Buffer {
  return createHmac('sha256', secret).update(`${slug}\n${expiresS}`).digest()
}

/** A token opening `slug` until `expiresAtMs` (rounded down to the second). */
export function mintPreviewToken (secret: string, slug: string, expiresAtMs: number): string {
  const expiresS = Math.floor(expiresAtMs / 1000)
  return `${expiresS}.${signature(secret, slug, expiresS).toString('base64url')}`
}

/** Whether `token` opens `slug` at `nowMs`: made with `secret` for this slug, and not expired. */
export function verifyPreviewToken (secret: string, token: string, slug: string, nowMs: number): boolean {
  if (token.length > MAX_TOKEN_LENGTH) return false
  const match = /^(\d{1,12})\.([\w-]{43})$/.exec(token)
  if (match === null) return false
  const expiresS = Number(match[1])
  if (expiresS * 1000 <= nowMs) return false
  const given = Buffer.from(match[2] as string, 'base64url')
  const expected = signature(secret, slug, expiresS)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A duration as `--ttl` takes it: `90s`, `30m`, `1h`, `7d` (or bare seconds); undefined when it is not one. */
export function parseTtl (text: string): number | undefined {
  const match = /^(\d{1,7})([smhd]?)$/.exec(text.trim())
  if (match === null) return undefined
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd']
  const seconds = Number(match[1]) * unit
  return seconds > 0 ? seconds * 1000 : undefined
}
