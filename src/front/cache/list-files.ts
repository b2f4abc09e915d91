// Lists too large to hold in memory (above the buffer limit, so relayed as streams), held as
// files instead, within CACHE_DISK_MAX_MB, in a directory of the process's own under the
// system's temporary directory, removed when the front closes. A relayed list is written to its
// file as it passes to its client; the file is held once the upstream's body has ended whole,
// labelled with the posts version the list was read under, and is then served as a held copy
// is: only after a version read that started after the request confirms it. A list of a newer
// version replaces it; the least recently used go first when the budget is reached.
import { createWriteStream, mkdtempSync } from 'node:fs'
import { open, rm, unlink, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pipeline, Readable, Transform } from 'node:stream'
import { LRUCache } from 'lru-cache'
import type { SortKey } from '../../contract/cursor.js'
import { relayCollector } from '../../lib/young-collection.js'
import type { Confirmation, VersionLabel } from './versions.js'

/** What a streamed list's answer carries besides its bytes. */
export interface ListFacts {
  etag: string | undefined
  next?: SortKey
  total?: number
}

export interface HeldListFile extends Confirmation {
  facts: ListFacts
  version: VersionLabel
  file: string
  bytes: number
}

export interface ListFiles {
  get: (path: string) => HeldListFile | undefined
  /** The held file's bytes, from a descriptor opened now; undefined (and forgotten) when the file is gone. */
  open: (path: string, held: HeldListFile) => Promise<Readable | undefined>
  /**
   * `stream` as it comes, written to a file meanwhile, held for `path` once it ends whole; as it
   * is when nothing can be held (no version, over the budget, `path` being written already).
   */
  keep: (path: string, stream: Readable, facts: ListFacts, version: VersionLabel | undefined) => Readable
  forget: (path: string) => void
  /** The files held now, and their bytes. */
  held: () => { lists: number, bytes: number }
  /** Forgets every file and removes the directory. */
  close: () => Promise<void>
}

/**
 * How far the file may fall behind the client before the list is relayed without it: the disk
 * must never hold back the answer, nor the bytes waiting for it grow without bound.
 */
const MAX_UNWRITTEN_BYTES = 16 * 1024 * 1024
/**
 * A held file is read in chunks of this size: each read is a trip to libuv's thread pool, and
 * each chunk's memory is freed only by a young collection. Reading the 383 MB list took the front
 * 356 ms of CPU in 128 KiB chunks, 250 in 256 KiB and 230 in 1 MiB, but five lists at once in
 * 1 MiB chunks took its peak RSS from 148 MB to 222.
 */
const READ_BYTES = 256 * 1024
/**
 * Relayed chunks are written to the file this many bytes at a time (one `writev`), not one write
 * each: a write is a trip to the thread pool too. Writing the 383 MB list one chunk at a time
 * cost the front 1,290 to 1,480 ms of CPU instead of 960 to 1,020 without a file; in 1 MiB
 * batches, 980 to 1,050.
 */
const WRITE_BATCH_BYTES = 1024 * 1024
/** The files' directory: `blog-read-api-lists-` and a suffix of mkdtemp's. */
const DIRECTORY_PREFIX = 'blog-read-api-lists-'

const ignore = (): void => {}

export function createListFiles ({ maxBytes, now }: { maxBytes: number, now: () => number }): ListFiles {
  let directory: string | undefined
  let closed = false
  let written = 0
  const writing = new Set<string>()
  const held = new LRUCache<string, HeldListFile>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (file) => Math.max(1, file.bytes),
    // Replaced, evicted or forgotten: a client still reading it keeps its descriptor.
    dispose: (file) => { unlink(file.file).catch(ignore) }
  })

  function keep (path: string, stream: Readable, facts: ListFacts, version: VersionLabel | undefined): Readable {
    if (closed || maxBytes === 0 || version === undefined || writing.has(path)) return stream
    try {
      directory ??= mkdtempSync(join(tmpdir(), DIRECTORY_PREFIX))
    } catch {
      return stream // no temporary directory to write in: relayed only
    }
    const file = join(directory, `${++written}.json`)
    const sink = createWriteStream(file)
    writing.add(path)
    sink.cork()
    let bytes = 0
    let failed = false
    let kept = false
    /** This list will not be held: the next answer for `path` may write its own file at once. */
    const fail = (): void => {
      if (failed) return
      failed = true
      writing.delete(path)
      sink.destroy()
    }
    // A disk that fails (full, gone) only means this list is not held; a directory removed from
    // outside is made again for the next one.
    sink.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' && directory === dirname(file)) directory = undefined
      fail()
    })
    // Closed once written, or destroyed: a file not held goes.
    sink.once('close', () => { if (!kept) unlink(file).catch(ignore) })
    const tee = new Transform({
      transform (chunk: Buffer, _encoding, done) {
        bytes += chunk.length
        if (bytes > maxBytes || sink.writableLength > MAX_UNWRITTEN_BYTES) fail()
        if (!failed) {
          sink.write(chunk)
          if (sink.writableLength >= WRITE_BATCH_BYTES) {
            sink.uncork()
            sink.cork()
          }
        }
        done(null, chunk)
      },
      // The upstream's body ended whole (a break is an error instead). The client's answer ends
      // once the file is written, so that a request right after it finds the file held.
      flush (done) {
        if (failed) return done()
        sink.end(() => {
          if (!failed && !closed) {
            held.set(path, { facts, version, file, bytes, validatedAt: now() })
            kept = true
          }
          writing.delete(path)
          done()
        })
      }
    })
    // The client gone, a 304, or a break upstream: the file is dropped.
    pipeline(stream, tee, (err) => { if (err !== undefined && err !== null) fail() })
    return tee
  }

  return {
    get: (path) => held.get(path),
    async open (path, file) {
      try {
        const handle = await open(file.file, 'r')
        return Readable.from(chunksOf(handle, file.bytes), { objectMode: true, highWaterMark: 1 })
      } catch {
        // Removed from outside (a cleaner of the temporary directory): asked for again instead.
        if (held.get(path) === file) held.delete(path)
        return undefined
      }
    },
    keep,
    forget: (path) => { held.delete(path) },
    held: () => ({ lists: held.size, bytes: held.calculatedSize }),
    async close () {
      closed = true
      held.clear()
      if (directory !== undefined) await rm(directory, { recursive: true, force: true })
    }
  }
}

/**
 * The file's first `bytes` (what was held: the answer's length says so), then the descriptor
 * closed (also when the reader stops early). Each chunk is counted as relayed: like a socket's,
 * these buffers are freed only by a young collection.
 */
async function * chunksOf (handle: FileHandle, bytes: number): AsyncGenerator<Buffer> {
  try {
    for (let left = bytes; left > 0;) {
      const size = Math.min(READ_BYTES, left)
      const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafeSlow(size), 0, size, null)
      if (bytesRead === 0) return
      left -= bytesRead
      relayCollector.relayed(bytesRead)
      yield bytesRead === size ? buffer : buffer.subarray(0, bytesRead)
    }
  } finally {
    await handle.close()
  }
}
