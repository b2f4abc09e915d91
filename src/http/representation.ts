// A JSON body served many times: serialised once, with its strong ETag and its compressed
// variants made once, lazily, and the conditional / content-negotiation logic both tiers share.
import { createHash, hash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import Negotiator from 'negotiator'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Below this, compression costs more than it saves. */
export const MIN_COMPRESSED_BYTES = 1024

export type Encoding = 'br' | 'gzip'
const SUFFIX: Record<Encoding, string> = { br: '-br', gzip: '-gz' }

const compressors: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  // Quality 5: most of brotli's gain at a small fraction of the cost of its default 11.
  br: (body) => promisify(brotliCompress)(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.length }
  }),
  gzip: (body) => promisify(gzip)(body, { level: 6 })
}

export interface Representation {
  readonly body: Buffer
  /** Strong, quoted ETag of the identity body; a compressed variant's tag adds a suffix. */
  readonly etag: string
  /** The body compressed with `encoding`, made on first use and kept. */
  encoded: (encoding: Encoding) => Promise<Buffer>
  /** Bytes it holds: its body, and each compressed variant made so far. */
  readonly heldBytes: number
  /**
   * Called when a compressed variant has been made (its bytes now in `heldBytes`), so that the
   * cache holding this representation counts it again. Set by that cache: one holds it at a time.
   */
  onGrown: (() => void) | undefined
}

/** The digest of every strong ETag: both tiers tag the same bytes alike. */
const ETAG_DIGEST = 'sha1'
const quoted = (digest: string): string => `"${digest}"`

/**
 * The strong ETag of `body`, or of `body` followed by `trailer` (UTF-8) when the answer's tag must
 * also cover what its headers carry (a next link, neighbours): hashed in turn, never joined.
 */
export function etagOf (body: Buffer, trailer = ''): string {
  if (trailer === '') return etagOfJoined(body)
  return quoted(createHash(ETAG_DIGEST).update(body).update(trailer).digest('base64url'))
}

/**
 * etagOf of a body whose trailer's bytes follow it in `joined` (a page built per request with
 * room for its next link's cursor): one call, without a hash object, about 0.5 µs less per page.
 */
export function etagOfJoined (joined: Uint8Array): string {
  return quoted(hash(ETAG_DIGEST, joined, 'base64url'))
}

/**
 * `bytes` in memory of their own. Node carves a buffer under half of `Buffer.poolSize` out of a
 * shared slab (64 KiB since Node 24, 8 KiB before), and that buffer keeps its whole slab alive,
 * whatever else in it was garbage: a front holding 10,000 pages of about 2 KB kept 425 MB of
 * buffers for the 62 MB it counted (89 MB with the copy). What is held is copied out of such a slab, once.
 */
export function ownBytes (bytes: Buffer): Buffer {
  if (bytes.byteLength === bytes.buffer.byteLength) return bytes
  const own = Buffer.allocUnsafeSlow(bytes.byteLength)
  bytes.copy(own)
  return own
}

/** `etag`: a strong ETag the body already has (the upstream's), to avoid hashing it again. */
export function createRepresentation (body: Buffer, etag = etagOf(body)): Representation {
  return new ServedRepresentation(ownBytes(body), etag)
}

/**
 * A representation made for one answer (a page built for its request), whose body may stay a
 * slice of a shared slab: copying it out costs more than the page's own join. One that is then
 * held is made again with createRepresentation.
 */
export function transientRepresentation (body: Buffer, etag = etagOf(body)): Representation {
  return new ServedRepresentation(body, etag)
}

/**
 * A class, not an object literal with a getter, which V8 did not free in young collections:
 * made and dropped in a loop, 530 to 770 bytes of each were promoted to the old generation (Node
 * 22, 24 and 26), and none of a class's. The front makes one for every page it builds: under
 * `page` (wrk, 50 connections, 10 s), 2.85 MB was promoted at each scavenge, with 13 or 14
 * mark-compacts; as a class, 0.67 MB, with 2 to 4.
 */
class ServedRepresentation implements Representation {
  onGrown: (() => void) | undefined = undefined
  /** Made on the first request for a compressed variant: most representations never get one. */
  private variants: Map<Encoding, Promise<Buffer>> | undefined = undefined
  private variantBytes = 0

  constructor (readonly body: Buffer, readonly etag: string) {}

  get heldBytes (): number {
    return this.body.byteLength + this.variantBytes
  }

  encoded (encoding: Encoding): Promise<Buffer> {
    this.variants ??= new Map()
    let variant = this.variants.get(encoding)
    if (variant === undefined) {
      variant = compressors[encoding](this.body).then((compressed) => {
        const own = ownBytes(compressed)
        this.variantBytes += own.byteLength
        this.onGrown?.()
        return own
      })
      this.variants.set(encoding, variant)
    }
    return variant
  }
}

/** The strong ETag of `encoding`'s variant of the body tagged `etag`. */
export function variantEtag (etag: string, encoding: Encoding): string {
  return `${etag.slice(0, -1)}${SUFFIX[encoding]}"`
}

/**
 * Bytes a cache counts a held representation for: what it holds now and its bookkeeping. Its
 * compressed variants are counted once made (the cache counts it again then, `onGrown`), not
 * reserved ahead: most clients of an API take one encoding, many none.
 */
export function heldSizeOf (representation: Representation): number {
  return representation.heldBytes + 256
}

const OFFERED: readonly Encoding[] = ['br', 'gzip']
/** Our order of preference when the client weighs codings equally; identity last. */
const PREFERENCE = [...OFFERED, 'identity'] as const

// negotiator ≥ 1 breaks ties by the server's preference (its `preferred` option, which
// @types/negotiator 0.6 does not declare yet).
type EncodingNegotiator = { encoding: (available: readonly string[], options: { preferred: readonly string[] }) => string | undefined }

/** Distinct Accept-Encoding values whose choice is kept: browsers and proxies send a handful. */
const MAX_CHOICES_KEPT = 100
const choices = new Map<string | undefined, Encoding | undefined>()

/**
 * The coding to send (RFC 9110 §12.5.3): the client's q-values decide, `q=0` refuses (with `*`
 * too), our preference breaks ties. Undefined: send the body as it is (identity), which is also
 * what a client refusing everything gets. Each value's choice is kept (parsing it is a few tenths
 * of a microsecond, asked on every answer with a body); past MAX_CHOICES_KEPT values, new ones
 * are negotiated each time.
 */
export function chooseEncoding (acceptEncoding: string | undefined): Encoding | undefined {
  if (choices.has(acceptEncoding)) return choices.get(acceptEncoding)
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as EncodingNegotiator
  const chosen = negotiator.encoding(PREFERENCE, { preferred: PREFERENCE })
  const encoding = OFFERED.find((offered) => offered === chosen)
  if (choices.size < MAX_CHOICES_KEPT) choices.set(acceptEncoding, encoding)
  return encoding
}

/**
 * If-None-Match uses the weak comparison (RFC 9110 §13.1.2): `W/` is ignored. Any variant of
 * the same body matches, so a client that switched encodings still gets its 304.
 */
export function ifNoneMatchHolds (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  const base = etag.slice(0, -1)
  for (const raw of header.split(',')) {
    const tag = raw.trim().replace(/^W\//, '')
    if (tag === etag || tag === `${base}${SUFFIX.br}"` || tag === `${base}${SUFFIX.gzip}"`) return true
  }
  return false
}

/**
 * The conditional answer both tiers give to a GET: Cache-Control always; with a validator, its
 * ETag and a 304 when the client's copy is current. `send` makes the 200, and runs only then.
 */
export async function sendConditional (
  request: FastifyRequest,
  reply: FastifyReply,
  { etag, cacheControl }: { etag: string | undefined, cacheControl: string },
  send: () => Promise<FastifyReply>
): Promise<FastifyReply> {
  reply.header('cache-control', cacheControl)
  if (etag !== undefined) {
    reply.header('etag', etag)
    if (ifNoneMatchHolds(request.headers['if-none-match'], etag)) return reply.code(304).send()
  }
  return await send()
}

/** Sends a representation: 304 when the client's copy is current, else the best encoding. */
export async function sendRepresentation (
  request: FastifyRequest, reply: FastifyReply, representation: Representation, cacheControl: string, contentType = JSON_CONTENT_TYPE
): Promise<FastifyReply> {
  // Added to what is there already (Origin, when CORS names its origins).
  const vary = reply.getHeader('vary')
  reply.header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`)
  return await sendConditional(request, reply, { etag: representation.etag, cacheControl }, async () => {
    const encoding = representation.body.length >= MIN_COMPRESSED_BYTES ? chooseEncoding(request.headers['accept-encoding']) : undefined
    reply.header('content-type', contentType)
    if (encoding === undefined) return reply.send(representation.body)
    const body = await representation.encoded(encoding)
    return reply
      .header('etag', variantEtag(representation.etag, encoding))
      .header('content-encoding', encoding)
      .send(body)
  })
}
