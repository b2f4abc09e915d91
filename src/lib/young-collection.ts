// Bytes relayed from one socket to another arrive in buffers of their own (one per socket read),
// which V8 counts as external memory and frees only when their young wrappers are collected. A
// relay makes almost no other garbage, so no young collection comes by itself: the buffers pile
// up until external-memory pressure forces mark-compacts of the whole heap (13 per list of
// 383 MB). With a minor collection every 8 MiB relayed, the front's CPU per such list fell from
// 816 and 880 ms to 403 and 506, and its peak RSS under five at once from 225 and 230 MB to 144
// and 146 (docs/decisions.md, "A relay collects the young generation every 8 MiB").
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
