// Turns the states a post API reads, one after the other, into changes: the slugs whose row
// version moved or appeared, and the slugs that are gone. Reads must reach it in the order they
// were made (one reader at a time), or an older read would undo a newer one.
import type { Change } from './change.js'
import { stateToken, type RowVersions } from './state-token.js'

export interface Observation {
  /** The token of the state observed. */
  token: string
  /** What changed since the previous state observed; undefined for the first one or when nothing did. */
  change: Change | undefined
}

export interface StateTracker {
  /** The token of the newest state observed. */
  readonly token: string | undefined
  /** The row versions of the newest state observed. */
  readonly versions: RowVersions | undefined
  /** Compares `versions` with the previous state; keeps `versions` (do not change it afterwards). */
  observe: (versions: RowVersions) => Observation
}

/** The change from `before` to `after`, named `since` → `until`. */
export function diffStates (before: RowVersions, after: RowVersions, since: string, until: string): Change {
  const upserted: string[] = []
  const deleted: string[] = []
  const added: string[] = []
  for (const [slug, version] of after) {
    const previous = before.get(slug)
    if (previous === version) continue
    upserted.push(slug)
    if (previous === undefined) added.push(slug)
  }
  for (const slug of before.keys()) if (!after.has(slug)) deleted.push(slug)
  return { since, until, upserted: upserted.sort(), deleted: deleted.sort(), added: added.sort() }
}

export function createStateTracker (): StateTracker {
  let current: { token: string, versions: RowVersions } | undefined
  return {
    get token () { return current?.token },
    get versions () { return current?.versions },
    observe (versions) {
      const token = stateToken(versions)
      const previous = current
      if (previous?.token === token) return { token, change: undefined }
      current = { token, versions }
      return { token, change: previous === undefined ? undefined : diffStates(previous.versions, versions, previous.token, token) }
    }
  }
}
