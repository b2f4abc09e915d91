// The size of each request head as written. Node's parser counts a head's method, target and
// field names and values against its limit, but skips the whitespace before a value (and empty
// lines before a request line) unread: a field padded with 30,000 spaces passed as one of 10
// bytes. The meter counts bytes as they arrive instead, per chunk the parser executes, from
// the socket's byte count; it looks at a chunk's bytes only when that count cannot settle it
// (a chunk that ends inside a head, or heads that may be over the limit), so a client that sends
// ordinary requests costs two additions and a C++ call per chunk.
//
// It rests on three parts of Node's parser that `node:http` keeps on every socket it consumes
// natively (Node 18 to 22): `socket.parser`, its `kOnExecute` hook (called after each chunk) and
// `getCurrentBuffer()`; `headersCompleted()` tells whether a chunk ended at the end of a head. Where
// they are missing (a socket the parser does not consume), nothing is metered and Node's own
// count is the only limit.
import type { Socket } from 'node:net'

/** Node's HTTP parser, as much of it as the meter uses. */
interface NodeParser {
  [hook: number]: unknown
  getCurrentBuffer: () => Buffer
  headersCompleted: () => boolean
  constructor: { kOnExecute?: number }
}

const CR = 0x0d
const LF = 0x0a
const HEAD_END = Buffer.from('\r\n\r\n')
/** Bytes a chunk may hold beyond its heads as Node counts them (one space per field…) before its bytes are looked at. */
const UNCOUNTED_SLACK = 1024
/** Bytes of a head's last chunk kept, to find an end of head split across two chunks. */
const KEPT_TAIL = 3

export interface HeadMeter {
  /**
   * A head has just been parsed (the parser is inside its chunk): whether it was over `limit`
   * bytes as written. `countedBytes`: its size as Node counts it plus its line ends, a lower
   * bound of its size as written.
   */
  headParsed: (countedBytes: number) => boolean
}

interface MeterOptions {
  /** Bytes a head may have as written. */
  limit: number
  /** A head still arriving is over the limit: refuse it now (the parser goes on, but nothing of it is dispatched). */
  overflow: (socket: Socket) => void
  /** An answer closing the connection is decided: metering stops. */
  closing: (socket: Socket) => boolean
}

/** The byte just after each end of head in `bytes`, from `from`, once empty lines before a request line are skipped. */
function headEnds (bytes: Buffer, from: number, skipLeadingLines: boolean): number[] {
  const ends: number[] = []
  let at = from
  let skip = skipLeadingLines
  for (;;) {
    if (skip) while (bytes[at] === CR && bytes[at + 1] === LF) at += 2
    const end = bytes.indexOf(HEAD_END, at)
    if (end === -1) return ends
    at = end + HEAD_END.length
    ends.push(at)
    skip = true
  }
}

/** `bytes` from `from` hold something other than line ends: a head has begun. */
function begins (bytes: Buffer, from: number): boolean {
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== CR && bytes[i] !== LF) return true
  return false
}

/** Meters the heads arriving on `socket`, or undefined where Node's parser does not expose what it needs. */
export function meterHeads (socket: Socket, { limit, overflow, closing }: MeterOptions): HeadMeter | undefined {
  const parser = (socket as Socket & { parser?: NodeParser | null }).parser
  const hook = parser?.constructor.kOnExecute
  if (parser == null || hook === undefined) return undefined
  const onExecute = parser[hook]
  if (typeof onExecute !== 'function' || typeof parser.getCurrentBuffer !== 'function' || typeof parser.headersCompleted !== 'function') return undefined

  /** Bytes of the head in progress received in earlier chunks. */
  let carried = 0
  /** Whether those bytes begin a head (not only empty lines before one). */
  let begun = false
  /** The last bytes of the chunk before, when it ended inside a begun head (an end of head may straddle). */
  let kept: Buffer | undefined
  /** `socket.bytesRead` after the last chunk executed. */
  let executedTo = 0
  /** Heads parsed in the chunk being executed, and their sizes as Node counts them. */
  let parsedInChunk = 0
  let countedInChunk = 0
  /** Where the chunk's heads end, in its own offsets, once looked at. */
  let chunkEnds: number[] | undefined
  let chunk: Buffer | undefined

  /** The chunk being executed, and where its heads end (looked at once per chunk). */
  function look (): number[] {
    if (chunkEnds !== undefined) return chunkEnds
    chunk = parser!.getCurrentBuffer()
    if (carried > 0 && begun && kept !== undefined) {
      // Bytes of the head in progress end the chunk before: an end of head may be split across both.
      const joined = Buffer.concat([kept, chunk])
      chunkEnds = headEnds(joined, 0, false).map((end) => end - kept!.length)
    } else {
      chunkEnds = headEnds(chunk, 0, true)
    }
    return chunkEnds
  }

  function afterChunk (chunkLength: number): void {
    const parsed = parsedInChunk
    const counted = countedInChunk
    parsedInChunk = 0
    countedInChunk = 0
    if (parsed > 0 && carried + chunkLength - counted <= UNCOUNTED_SLACK && parser!.headersCompleted()) {
      // The chunk ended where its last head did, give or take a few uncounted bytes: the usual case.
      carried = 0
      begun = false
      kept = undefined
    } else if (parsed > 0) {
      const ends = look()
      const tailFrom = ends[parsed - 1] ?? chunkLength
      carried = chunkLength - tailFrom
      begun = begins(chunk!, tailFrom)
      kept = carried > 0 ? chunk!.subarray(chunk!.length - Math.min(KEPT_TAIL, carried)) : undefined
    } else {
      // The head in progress goes on: every byte of the chunk is part of it.
      chunk = parser!.getCurrentBuffer()
      carried += chunkLength
      begun ||= begins(chunk, 0)
      kept = Buffer.concat([kept ?? Buffer.alloc(0), chunk]).subarray(-KEPT_TAIL)
    }
    chunkEnds = undefined
    chunk = undefined
    if (carried > limit) overflow(socket)
  }

  parser[hook] = function (this: unknown, ret: unknown): unknown {
    const bytesRead = socket.bytesRead
    const chunkLength = bytesRead - executedTo
    executedTo = bytesRead
    // A parser error, or an answer closing the connection decided: Node's own course, unmetered.
    if (typeof ret === 'number' && !closing(socket)) afterChunk(chunkLength)
    return (onExecute as (this: unknown, ret: unknown) => unknown).call(this, ret)
  }

  return {
    headParsed (countedBytes) {
      const index = parsedInChunk++
      countedInChunk += countedBytes
      const chunkLength = socket.bytesRead - executedTo
      // Every head parsed in this chunk fits in the bytes received since the chunk before.
      if (carried + chunkLength <= limit) return false
      const ends = look()
      const end = ends[index]
      // Not found where the parser found it: no evidence against the head.
      if (end === undefined) return false
      const size = index === 0 ? carried + end : end - (ends[index - 1] as number)
      return size > limit
    }
  }
}
