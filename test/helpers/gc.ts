// Garbage collections on demand, for memory assertions. `--expose-gc` is not among the flags
// `npm test` passes: `gc` is taken as the service takes it for its relays.
import { exposedGc } from '../../src/lib/young-collection.js'

const v8Gc = exposedGc()
if (v8Gc === undefined) throw new Error('this Node gives no gc function')

/** A full collection. */
export const gc = (): void => v8Gc()
/** A collection of the young generation only. */
export const minorGc = (): void => v8Gc({ type: 'minor' })
