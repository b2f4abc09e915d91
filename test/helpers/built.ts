// Tests of what `npm run build` makes (the executable, the client package): `npm test` does not
// build (`npm ci` does, and so does `npm run build`), so a dist/ older than its src/ is refused
// rather than tested.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SRC = join(ROOT, 'src/')
export const DIST = join(ROOT, 'dist/')
/** The client package (packages/client), built by the same `npm run build`. */
export const CLIENT = join(ROOT, 'packages/client/')

/** Throws unless every module of the server's and the client's src/ has its dist/ output, written after the module last changed. */
export function assertBuilt (): void {
  for (const [src, dist] of [[SRC, DIST], [join(CLIENT, 'src/'), join(CLIENT, 'dist/')]] as const) {
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
      const source = join(entry.parentPath, entry.name)
      const built = join(dist, source.slice(src.length).replace(/\.ts$/, '.js'))
      if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
        throw new Error(`${relative(ROOT, built)} is missing or older than ${relative(ROOT, source)}: run \`npm run build\` before the tests`)
      }
    }
  }
}
