// A JSON body served many times: serialised once, with its strong ETag and its compressed
// variants made once, lazily, and the conditional / content-negotiation logic both tiers share.
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Below this, compression costs more than it saves. */
const MIN_COMPRESSED_BYTES = 1024

type Encoding = 'br' | 'gzip'
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
}

export function etagOf (body: Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`
}

/** `etag`: a strong ETag the body already has (the upstream's), to avoid hashing it again. */
export function createRepresentation (body: Buffer, etag = etagOf(body)): Representation {
  const variants = new Map<Encoding, Promise<Buffer>>()
  return {
    body,
    etag,
    encoded (encoding) {
      let variant = variants.get(encoding)
      if (variant === undefined) {
        variant = compressors[encoding](body)
        variants.set(encoding, variant)
      }
      return variant
    }
  }
}

/** br, then gzip, when the client accepts them (q=0 refuses); identity otherwise. */
export function chooseEncoding (acceptEncoding: string | undefined): Encoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding === '') return undefined
  let gzipAccepted = false
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const refused = params.some((p) => /^\s*q=0(?:\.0*)?\s*$/.test(p))
    if (refused) continue
    if (name === 'br') return 'br'
    if (name === 'gzip' || name === '*') gzipAccepted = true
  }
  return gzipAccepted ? 'gzip' : undefined
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

/** Sends a representation: 304 when the client's copy is current, else the best encoding. */
export async function sendRepresentation (request: FastifyRequest, reply: FastifyReply, representation: Representation, cacheControl: string): Promise<FastifyReply> {
  reply.header('cache-control', cacheControl).header('vary', 'accept-encoding')
  if (ifNoneMatchHolds(request.headers['if-none-match'], representation.etag)) {
    return reply.code(304).header('etag', representation.etag).send()
  }
  const encoding = representation.body.length >= MIN_COMPRESSED_BYTES ? chooseEncoding(request.headers['accept-encoding']) : undefined
  reply.header('content-type', JSON_CONTENT_TYPE)
  if (encoding === undefined) return reply.header('etag', representation.etag).send(representation.body)
  const body = await representation.encoded(encoding)
  return reply
    .header('etag', `${representation.etag.slice(0, -1)}${SUFFIX[encoding]}"`)
    .header('content-encoding', encoding)
    .send(body)
}
