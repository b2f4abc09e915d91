// A change between two states of the published posts, each state named by its token: the slugs
// whose post was added or changed, and the slugs that are gone (a renamed post is both). This is
// what the stream's events, the webhooks and a resumed client get.
import { isStateToken } from './state-token.js'

export interface Change {
  /** The state the change starts from. */
  readonly since: string
  /** The state it leads to. */
  readonly until: string
  /** Slugs present in `until` whose post is new or different, sorted. */
  readonly upserted: readonly string[]
  /** Slugs absent from `until`, sorted. */
  readonly deleted: readonly string[]
  /**
   * Of `upserted`, the slugs absent from `since` (new posts), where the source knows it (the
   * post API's tracker; not the stream, which does not carry it): lets a longer span leave out a
   * post that came and went within it.
   */
  readonly added?: readonly string[]
}

/** Whether applying `change` to a copy changes nothing (a write that left every post as it was). */
export function isEmptyChange (change: Change): boolean {
  return change.upserted.length === 0 && change.deleted.length === 0
}

/**
 * Slugs touched one after the other, folded into one change: what happened last to a slug
 * decides. Applying the result to a copy of the first state gives exactly the last one. A post
 * known to have been added within the span and removed again is left out; one whose addition
 * is not known (changes read from a stream) is listed as deleted, which a copy that never had it
 * ignores; a post that came back to its earlier content is listed as upserted.
 */
export class ChangeFolder {
  readonly #slugs = new Map<string, { present: boolean, absentAtStart: boolean }>()

  add (change: Change): void {
    const added = new Set(change.added)
    for (const slug of change.upserted) {
      const known = this.#slugs.get(slug)
      if (known === undefined) this.#slugs.set(slug, { present: true, absentAtStart: added.has(slug) })
      else known.present = true
    }
    for (const slug of change.deleted) {
      const known = this.#slugs.get(slug)
      if (known === undefined) this.#slugs.set(slug, { present: false, absentAtStart: false })
      else known.present = false
    }
  }

  result (since: string, until: string): Change {
    const upserted: string[] = []
    const deleted: string[] = []
    const added: string[] = []
    for (const [slug, { present, absentAtStart }] of this.#slugs) {
      if (present) upserted.push(slug)
      if (present && absentAtStart) added.push(slug)
      if (!present && !absentAtStart) deleted.push(slug)
    }
    // Code-unit order: the same in every process, whatever its locale.
    return { since, until, upserted: upserted.sort(), deleted: deleted.sort(), added: added.sort() }
  }
}

/** `first` then `second` (which starts where `first` ends) as one change. */
export function composeChanges (first: Change, second: Change): Change {
  const folder = new ChangeFolder()
  folder.add(first)
  folder.add(second)
  return folder.result(first.since, second.until)
}

/** The JSON an event or a webhook carries for `change` (webhooks add their own fields). */
export function changeJson (change: Change): { since: string, until: string, upserted: readonly string[], deleted: readonly string[] } {
  return { since: change.since, until: change.until, upserted: change.upserted, deleted: change.deleted }
}

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')

/**
 * A change received from elsewhere (the post API's stream, at the front), checked: undefined
 * unless it has two tokens and two lists of distinct strings with no slug in both.
 */
export function parseChange (value: unknown): Change | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { since, until, upserted, deleted } = value as Record<string, unknown>
  if (typeof since !== 'string' || !isStateToken(since) || typeof until !== 'string' || !isStateToken(until)) return undefined
  if (!isStringArray(upserted) || !isStringArray(deleted)) return undefined
  if (new Set([...upserted, ...deleted]).size !== upserted.length + deleted.length) return undefined
  return { since, until, upserted: [...upserted].sort(), deleted: [...deleted].sort() }
}
