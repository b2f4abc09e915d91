// Relaying a list too large to validate whole: its first bytes must open a JSON array, and a
// break upstream must break the client's response too (never a truncated body that looks whole).
import type { Readable } from 'node:stream'
import { ProblemError } from '../contract/problems.js'
import { resumedStream } from '../lib/resumed-stream.js'

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d])

/** Resolves once the first bytes are checked; rejects with a 502 problem when they are not `[`. */
export async function relayJsonArray (upstream: Readable): Promise<Readable> {
  const chunks = upstream[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  const seen: Buffer[] = []
  let first: number | undefined
  try {
    while (first === undefined) {
      const next = await chunks.next()
      if (next.done === true) break
      seen.push(next.value)
      first = next.value.find((byte) => !WHITESPACE.has(byte))
    }
  } catch (err) {
    throw new ProblemError('upstream-unreachable', 'The upstream post API broke the connection.', { cause: err })
  }
  if (first !== 0x5b) {
    upstream.destroy()
    throw new ProblemError('upstream-bad-response', 'The upstream post API did not answer with an array of posts.')
  }
  // An error from here on destroys the client's socket (Fastify does so once headers are out).
  return resumedStream(seen, chunks)
}
