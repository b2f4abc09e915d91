// Tests of what `npm run build` makes (the executable, the browser client): `npm test` does not
// build (`npm ci` does, and so does `npm run build`), so a dist/ older than src/ is refused
// rather than tested.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
export const DIST = fileURLToPath(new URL('../../dist/', import.meta.url))

/** Throws unless every src/ module has its dist/ output, written after the module last changed. */
export function assertBuilt (): void {
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
    const source = join(entry.parentPath, entry.name)
    const built = join(DIST, source.slice(SRC.length).replace(/\.ts$/, '.js'))
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
      throw new Error(`dist/ is older than ${source.slice(SRC.length - 4)}: run \`npm run build\` before the tests`)
    }
  }
}
