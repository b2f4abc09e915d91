// Bytes relayed from one socket to another arrive in buffers of their own (one per socket read),
// which V8 counts as external memory and frees only when their young wrappers are collected. A
// relay makes almost no other garbage, so no young collection comes by itself: the buffers pile
// up until external-memory pressure forces mark-compacts of the whole heap. Relaying a list of
// 383 MB, the front's CPU was 1.10 to 1.13 s and its RSS 197 to 205 MB (221 with five at once);
// with a minor collection every 8 MiB relayed, 0.56 to 0.69 s and 135 to 138 MB (147 to 153).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Bytes relayed between two minor collections. */
export const YOUNG_COLLECTION_BYTES = 8 * 1024 * 1024

interface GcOptions { type?: 'minor' | 'major' }
type Gc = (options?: GcOptions) => void

/**
 * V8's `gc`, from the process's flags (`--expose-gc`) or else taken from a fresh context with the
 * flag set for that moment (V8 installs `gc` on contexts created while it is set); undefined
 * where this Node cannot give it.
 */
export function exposedGc (): Gc | undefined {
  const own = (globalThis as { gc?: Gc }).gc
  if (own !== undefined) return own
  try {
    setFlagsFromString('--expose-gc')
    return runInNewContext('gc') as Gc | undefined
  } catch {
    return undefined
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
}

export interface YoungCollector {
  /** Counts `bytes` relayed; collects the young generation once `everyBytes` have been since the last collection. */
  relayed: (bytes: number) => void
}

/**
 * `collect`: the collection to run (V8's minor collection unless given, taken at the first
 * need; none where Node cannot give it).
 */
export function createYoungCollector (everyBytes = YOUNG_COLLECTION_BYTES, collect?: () => void): YoungCollector {
  let since = 0
  let run = collect
  return {
    relayed (bytes) {
      since += bytes
      if (since < everyBytes) return
      since = 0
      if (run === undefined) {
        const gc = exposedGc()
        run = gc === undefined ? () => {} : () => gc({ type: 'minor' })
      }
      run()
    }
  }
}

/** The process's collector: collections are of the whole process, so its relays share one count. */
export const relayCollector = createYoungCollector()
