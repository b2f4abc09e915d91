// The index of a keyed list (src/contract/keyed-list.ts): every post of a list shape, in list
// order, after its cursor. The page after a cursor is the posts after that cursor's line, with the
// same bytes, Link and ETag as the post API's page. Which shapes are indexed, and how an index is
// confirmed, is page-indexes.ts.
import { decodeCursor, type SortKey } from '../../contract/cursor.js'
import { etagOfJoined, transientRepresentation, type Representation } from '../../http/representation.js'
import { isPost, parseUpstreamJson } from './answer-checks.js'

/** A page, as the cache hands one over. */
export interface IndexedPage {
  representation: Representation
  empty: boolean
  next?: SortKey
}

export interface PageIndex {
  /** Bytes of the keyed list it was built from. */
  readonly bytes: number
  /** Bytes of memory it is counted for: the keyed list itself, its offsets and its cursor table. */
  readonly memoryBytes: number
  /** The page of at most `limit` posts after `after` (from the start without), or undefined when the list does not hold that cursor. */
  page: (after: string | undefined, limit: number) => IndexedPage | undefined
}

const LINE_END = 0x0a
const SPACE = 0x20
const OPEN = 0x5b
const COMMA = 0x2c
const CLOSE = 0x5d
/** Lines parsed between two turns of the event loop while an index is built. */
const LINES_PER_TURN = 2000
/** An empty slot of the cursor table. */
const EMPTY = 0xffffffff

/** Whether a line's JSON is a post, as an upstream body's must be (answer-checks.ts). */
function parsesAsPost (text: string): boolean {
  try {
    return isPost(parseUpstreamJson(text))
  } catch {
    return false
  }
}

/** FNV-1a of bytes `start` to `end` of `bytes`. */
function hashOf (bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
  return hash >>> 0
}

/**
 * The index of a keyed list, or undefined when a line is not `<cursor> <post JSON>` or a cursor
 * comes twice. Built a slice of lines at a time, giving the event loop back in between: 100,000
 * posts take a few hundred milliseconds, which requests must not wait behind. The posts stay in
 * the keyed list's bytes, found by their offsets, and the cursors by an open-addressing table of
 * line numbers: an index is the list plus about 16 bytes a line, none of it objects for the
 * garbage collector to trace, and a page is copied byte for byte as the upstream sent it.
 */
export async function buildPageIndex (keyedList: Buffer): Promise<PageIndex | undefined> {
  let lines = 0
  for (let at = keyedList.indexOf(LINE_END); at !== -1; at = keyedList.indexOf(LINE_END, at + 1)) lines++
  /** Where each line starts, and where its post starts (it ends before the next line's start). */
  const lineStarts = new Uint32Array(lines)
  const postStarts = new Uint32Array(lines)
  // At most half full, so that a probe ends soon.
  const slots = new Uint32Array(2 ** Math.ceil(Math.log2(Math.max(2, lines * 2)))).fill(EMPTY)
  const mask = slots.length - 1

  /** The line of the cursor in bytes `start` to `end` of `bytes`, or the free slot where it would go (as -1 - slot). */
  function find (bytes: Uint8Array, start: number, end: number): number {
    const length = end - start
    for (let slot = hashOf(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const line = slots[slot] as number
      if (line === EMPTY) return -1 - slot
      const lineStart = lineStarts[line] as number
      if ((postStarts[line] as number) - 1 - lineStart === length && keyedList.compare(bytes, start, end, lineStart, lineStart + length) === 0) return line
    }
  }

  let at = 0
  for (let line = 0; line < lines;) {
    for (let n = 0; n < LINES_PER_TURN && line < lines; n++, line++) {
      const end = keyedList.indexOf(LINE_END, at)
      const space = keyedList.indexOf(SPACE, at)
      if (space === -1 || space > end || !parsesAsPost(keyedList.toString('utf8', space + 1, end))) return undefined
      const found = find(keyedList, at, space)
      if (found >= 0) return undefined
      lineStarts[line] = at
      postStarts[line] = space + 1
      slots[-1 - found] = line
      at = end + 1
    }
    await new Promise(setImmediate)
  }
  // Bytes after the last line end: not a line.
  if (at !== keyedList.length) return undefined

  const cursorAt = (line: number): string => keyedList.toString('latin1', lineStarts[line] as number, (postStarts[line] as number) - 1)
  /** Where the post of `line` ends: before its line end, which is the next line's start less one (the last line's ends the list). */
  const postEnd = (line: number): number => (line + 1 < lines ? lineStarts[line + 1] as number : keyedList.length) - 1
  /**
   * The JSON array of the posts of lines `start` to `end` (excluded), copied once into one buffer,
   * and after it, when `trailer` names a line, a line end and that line's cursor (what a page's
   * ETag covers besides its bytes): the array is the buffer's first `length` bytes.
   */
  function arrayOf (start: number, end: number, trailer?: number): { joined: Buffer, length: number } {
    // The brackets, and a comma between two posts.
    let length = 2 + Math.max(0, end - start - 1)
    for (let line = start; line < end; line++) length += postEnd(line) - (postStarts[line] as number)
    const cursorStart = trailer === undefined ? 0 : lineStarts[trailer] as number
    const cursorEnd = trailer === undefined ? 0 : (postStarts[trailer] as number) - 1
    const joined = Buffer.allocUnsafe(trailer === undefined ? length : length + 1 + cursorEnd - cursorStart)
    let at = 0
    joined[at++] = OPEN
    for (let line = start; line < end; line++) {
      if (line > start) joined[at++] = COMMA
      at += keyedList.copy(joined, at, postStarts[line] as number, postEnd(line))
    }
    joined[at++] = CLOSE
    if (trailer !== undefined) {
      joined[at++] = LINE_END
      keyedList.copy(joined, at, cursorStart, cursorEnd)
    }
    return { joined, length }
  }
  return {
    bytes: keyedList.length,
    memoryBytes: keyedList.length + lineStarts.byteLength + postStarts.byteLength + slots.byteLength,
    page (after, limit) {
      let last = -1
      if (after !== undefined) {
        const cursor = Buffer.from(after, 'latin1')
        last = find(cursor, 0, cursor.length)
        if (last < 0) return undefined
      }
      const start = last + 1
      const end = Math.min(start + limit, lines)
      if (end === lines || end === start) return { representation: transientRepresentation(arrayOf(start, end).joined), empty: end === start }
      const next = decodeCursor(cursorAt(end - 1))
      if (next === undefined) return undefined
      // As the post API makes it: the ETag covers the next link's cursor as well as the bytes.
      const { joined, length } = arrayOf(start, end, end - 1)
      return { representation: transientRepresentation(joined.subarray(0, length), etagOfJoined(joined)), empty: false, next }
    }
  }
}
