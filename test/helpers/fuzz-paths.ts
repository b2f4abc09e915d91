// Generated request targets for the front's path fuzz test,
// and the oracle saying what the front must do with each, computed from the wire bytes alone.
import fc from 'fast-check'
import { createSlugValidator, DEFAULT_SLUG_PATTERN } from '../../src/contract/slug.js'
import { createRandom } from '../../bench/random.js'

/** Hostile slug segments (encodings, dot segments, separators), as the slug segment goes on the wire (some raw, some encoded). */
const HOSTILE_SEGMENTS: readonly string[] = [
  '', 'a%2Fb', 'hello-world%2F', '..', '.', '%2e%2e', '.%2e', '..%2F..%2Fadmin', '%2F%2Fevil.example%2Fx',
  'http:%2F%2Fevil', 'a%5C..%5C..', 'a\\..\\..', '%252F', 'a%00b', '%00', 'a\u0000b', 'a b', 'a\tb', 'café',
  '%zz', '%E0%A4%A', '%C0%AF', 'Hello-World', 'caf%C3%A9', 'cafe%CC%81', '%EF%BD%93%EF%BD%8C%EF%BD%95%EF%BD%87',
  '%E2%80%AE', 'hello%E2%80%8Bworld', 'a%20b', 'a;b=c', 'a%3Fx', 'a%23b', 'a%0D%0AX-Injected:%201', 'a?x=1',
  '-a', 'a-', 'a--b', '%27%20OR%20%271%27%3D%271', 'a'.repeat(200), 'a'.repeat(201), 'a'.repeat(2000),
  'hello-world', 'first-post', 'a_b', '100%25'
]

/** Whole hostile targets that are not `/api/blog/<segment>`. */
const HOSTILE_TARGETS: readonly string[] = [
  '/API/BLOG/hello', 'http://evil.example/api/blog/hello-world', '/api/blog/a/b', '/api/blog//', `/api/blog/${'a'.repeat(20_000)}`
]

const isValidSlug = createSlugValidator()

export interface Encoding {
  /** Which bytes are percent-encoded. */
  mode: 'none' | 'some' | 'all'
  hex: 'upper' | 'lower' | 'mixed'
  /** How many times the `%` of the result is encoded again (`%2F` → `%252F` → `%25252F`). */
  double: 0 | 1 | 2
  seed: number
}

function percentEncode (bytes: Buffer, { mode, hex, double, seed }: Encoding): Buffer {
  // Seeded, so "encode some characters" is part of the generated (and shrinkable) value.
  const random = createRandom(seed)
  const pct = (byte: number): string => {
    const digits = byte.toString(16).padStart(2, '0')
    const upper = hex === 'upper' || (hex === 'mixed' && random() < 0.5)
    return '%' + (upper ? digits.toUpperCase() : digits)
  }
  const encoded: number[] = []
  for (const byte of bytes) {
    if (mode === 'all' || (mode === 'some' && random() < 0.5)) encoded.push(...Buffer.from(pct(byte)))
    else encoded.push(byte)
  }
  let out = Buffer.from(encoded)
  for (let i = 0; i < double; i++) {
    out = Buffer.from(out.toString('latin1').replace(/%/g, () => random() < 0.8 ? pct(0x25) : '%'), 'latin1')
  }
  return out
}

const validSlug = fc.stringMatching(DEFAULT_SLUG_PATTERN, { size: 'small' }).filter((s) => s.length <= 200)

/** The bytes of the slug segment before encoding: web segments, binary strings, raw bytes, the hostile segments, valid slugs and near misses. */
const segmentSource: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 3, arbitrary: fc.webSegment().map((s) => Buffer.from(s, 'utf8')) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }).map((s) => Buffer.from(s, 'utf8')) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS).map((s) => Buffer.from(s, 'utf8')) },
  // Valid slugs, so that the relay path (hit, exact upstream path) is exercised often.
  { weight: 4, arbitrary: validSlug.map((s) => Buffer.from(s)) },
  // Near misses: upper case, dots, underscores, tildes, doubled or dangling hyphens.
  { weight: 2, arbitrary: fc.stringMatching(/^[a-zA-Z0-9._~-]{1,12}$/).map((s) => Buffer.from(s)) }
)

const encoding: fc.Arbitrary<Encoding> = fc.record({
  mode: fc.constantFrom('none', 'none', 'some', 'all'),
  hex: fc.constantFrom('upper', 'lower', 'mixed'),
  double: fc.constantFrom(0, 0, 0, 1, 2),
  seed: fc.nat()
})

const prefix = fc.oneof(
  { weight: 12, arbitrary: fc.constant('/api/blog/') },
  { weight: 1, arbitrary: fc.constantFrom('/api/blog', '/api/blog//', '/api/posts/', '/api/post/', '/', '', '*', '/API/BLOG/', 'http://evil.example/api/blog/', '//evil.example/api/blog/', '/api/blog/x/', '/api/blog/..%2F') }
)

const suffix = fc.oneof(
  { weight: 12, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('?x=1', '?%zz', '#frag', '/', '/x', '%', '?a=%2F..') }
)

/**
 * A request target, one character per byte (latin1, so counterexamples print readably):
 * mostly `/api/blog/<encoded segment>`, sometimes another route or a hostile whole target.
 */
export const requestTarget: fc.Arbitrary<string> = fc.oneof(
  { weight: 50, arbitrary: fc.tuple(prefix, segmentSource, encoding, suffix).map(([p, bytes, enc, s]) => Buffer.concat([Buffer.from(p), percentEncode(bytes, enc), Buffer.from(s)])) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_TARGETS).map((t) => Buffer.from(t)) }
).map((bytes) => bytes.toString('latin1'))

/**
 * What the front must do with `target`, decided the way Node and Fastify's router read it:
 * the query (`?`) and fragment (`#`) are cut off, the segment is decoded with
 * `decodeURIComponent` semantics (find-my-way: `decodeURI` on the path, then the reserved
 * characters in the parameter), and malformed encoding is a 400 `bad-request`.
 * `loose` is for every target whose routing is not that simple: raw bytes outside visible ASCII
 * (Node's parser may refuse them, or CR/LF may frame more requests), other routes, `/` in the segment.
 */
export type Expectation =
  | { kind: 'loose' }
  | { kind: 'bad-request' }
  | { kind: 'slug', slug: string, valid: boolean }

const SLUG_ROUTE = '/api/blog/'

export function expectationFor (target: Buffer): Expectation {
  if (target.some((byte) => byte < 0x21 || byte > 0x7e)) return { kind: 'loose' }
  const text = target.toString('latin1')
  if (!text.startsWith(SLUG_ROUTE)) return { kind: 'loose' }
  let segment = text.slice(SLUG_ROUTE.length)
  const end = segment.search(/[?#]/)
  if (end !== -1) segment = segment.slice(0, end)
  if (segment.includes('/')) return { kind: 'loose' }
  // Past the header limit (16 KiB) the answer is 431 before any routing.
  if (target.length > 16_000) return { kind: 'loose' }
  let slug: string
  try {
    slug = decodeURIComponent(segment)
  } catch {
    return { kind: 'bad-request' }
  }
  return { kind: 'slug', slug, valid: isValidSlug(slug) }
}

/** The only upstream paths the front may ever request. */
export function isAllowedUpstreamPath (path: string): boolean {
  if (path === '/api/posts') return true
  if (!path.startsWith('/api/post/')) return false
  let slug: string
  try {
    slug = decodeURIComponent(path.slice('/api/post/'.length))
  } catch {
    return false
  }
  return isValidSlug(slug) && path === '/api/post/' + encodeURIComponent(slug)
}
