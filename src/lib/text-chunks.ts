// A long text made of many items (a streamed list: posts, keyed lines), written in chunks.

/**
 * Chunks of about this size: each is a write, a step of the stream and a turn of the event loop,
 * and below 64 KiB (a socket read's size) those steps cost more than the text: a list of 100,000
 * posts took a tenth less time in 64 KiB chunks than in 16 KiB ones; 256 KiB cost more system time.
 */
export const STREAM_CHUNK_CHARS = 64 * 1024

export interface ChunkedText<T> {
  /** An item's text. */
  text: (item: T) => string
  /**
   * Before the first item, between two, and after the last (or what gives it once every item is
   * written: text that depends on them).
   */
  open: string
  separator: string
  close: string | (() => Promise<string>)
  chunkChars?: number
}

/** `open`, the items' texts between separators, then `close`, in chunks of at least `chunkChars` (the last aside). */
export async function * textInChunks<T> (batches: AsyncIterable<readonly T[]>, { text, open, separator, close, chunkChars = STREAM_CHUNK_CHARS }: ChunkedText<T>): AsyncIterable<string> {
  let chunk = open
  let between = ''
  for await (const items of batches) {
    for (const item of items) {
      chunk += between + text(item)
      between = separator
      if (chunk.length >= chunkChars) {
        yield chunk
        chunk = ''
        // A fast reader (loopback) could otherwise drain a cursor that answers at once (SQLite)
        // without ever giving the event loop back: other requests would wait for the whole list.
        await new Promise(setImmediate)
      }
    }
  }
  yield chunk + (typeof close === 'string' ? close : await close())
}
