// Tests of what `npm run build` makes (the executable, the browser client): `npm test` does not
// build (`npm ci` does, and so do `npm run build` and `npm start`), so a dist/ older than src/
// is refused rather than tested.
import { DIST, staleSource } from '../../scripts/dist-freshness.js'

export { DIST }

/** Throws unless every src/ module has its dist/ output, written after the module last changed. */
export function assertBuilt (): void {
  const stale = staleSource()
  if (stale !== undefined) throw new Error(`dist/ is older than src/${stale}: run \`npm run build\` before the tests`)
}
