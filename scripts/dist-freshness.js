// Whether each build output is the build of its sources as they are now: every module of a
// project's src/ has its output in its dist/, written after the module last changed (tsc
// rewrites every output at each build). Two projects: the server (src/ → dist/) and the client
// package (packages/client/src/ → packages/client/dist/). Read by the launcher
// (build-if-stale.js) and by the tests of what the build makes.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const DIST = join(ROOT, 'dist')
export const CLIENT = join(ROOT, 'packages', 'client')

/** What `npm run build` compiles, each with the tsc project that builds it. */
export const PROJECTS = [
  { src: join(ROOT, 'src'), dist: DIST, tsconfig: join(ROOT, 'tsconfig.build.json') },
  { src: join(CLIENT, 'src'), dist: join(CLIENT, 'dist'), tsconfig: join(CLIENT, 'tsconfig.json') }
]

/** The first module of `project` (its path from the root) whose output is missing or older than it; undefined when its dist/ is current. */
export function staleModule ({ src, dist }) {
  // A checkout without the client package (a copy of the scripts alone) has only the server.
  if (!existsSync(src)) return undefined
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue
    const source = join(entry.parentPath, entry.name)
    const built = join(dist, relative(src, source).replace(/\.ts$/, '.js'))
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) return relative(ROOT, source)
  }
  return undefined
}

/** The first module of any project whose output is stale; undefined when every build is current. */
export function staleSource () {
  for (const project of PROJECTS) {
    const stale = staleModule(project)
    if (stale !== undefined) return stale
  }
  return undefined
}
