// A full garbage collection on demand, for memory assertions. `--expose-gc` is not among the
// flags `npm test` passes: `gc` is taken as the service takes it for its relays.
import { exposedGc } from '../../src/lib/young-collection.js'

const fullGc = exposedGc()
if (fullGc === undefined) throw new Error('this Node gives no gc function')

export const gc = (): void => fullGc()
