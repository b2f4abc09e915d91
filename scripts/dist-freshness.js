// Whether dist/ is the build of src/ as it is now: every module of src/ has its output in dist/,
// written after the module last changed (tsc rewrites every output at each build). Read by the
// launcher (build-if-stale.js) and by the tests of what the build makes.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const SRC = join(ROOT, 'src')
export const DIST = join(ROOT, 'dist')

/** The first src/ module (its path under src/) whose dist/ output is missing or older than it; undefined when dist/ is current. */
export function staleSource () {
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue
    const source = join(entry.parentPath, entry.name)
    const module = relative(SRC, source)
    const built = join(DIST, module.replace(/\.ts$/, '.js'))
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) return module
  }
  return undefined
}
