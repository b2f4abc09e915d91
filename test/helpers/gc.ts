// A full garbage collection on demand, for memory assertions. `--expose-gc` is not among the
// flags `npm test` passes, so the flag is set at run time and `gc` taken from a fresh context
// (V8 installs it on contexts created after the flag is set).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

export const gc: () => void = (globalThis as { gc?: () => void }).gc ?? (() => {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
})()
