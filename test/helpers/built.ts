// Tests of what `npm run build` makes (the executable, the client package): `npm test` does not
// build (`npm ci` does, and so do `npm run build` and `npm start`), so a build older than its
// sources is refused rather than tested.
import { CLIENT, DIST, staleSource } from '../../scripts/dist-freshness.js'

export { CLIENT, DIST }

/** Throws unless every module of the server's and the client's src/ has its output, written after the module last changed. */
export function assertBuilt (): void {
  const stale = staleSource()
  if (stale !== undefined) throw new Error(`the build is older than ${stale}: run \`npm run build\` before the tests`)
}
