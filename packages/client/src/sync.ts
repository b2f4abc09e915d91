// sync(): a copy of the posts kept exact from the front's deltas (`GET /api/changes`, then
// `?since=TOKEN`): each answer names the state it leads to, the posts added or changed since the
// copy's state and the slugs removed since. A token too old to answer (410 `sync-expired`) starts
// the copy again from the whole list.
import { BlogApiProblem } from './problem.js'
import type { RequestOptions } from './index.js'

/** A copy of the posts, as sync() keeps it. */
export interface PostCopy<T> {
  /** The token of the state the copy holds; undefined until its first sync. */
  token: string | undefined
  /** Every post, by slug (in no particular order: sort them as the page needs). */
  readonly posts: Map<string, T>
}

/** An empty copy: its first sync() fills it with every post. */
export function createPostCopy<T> (): PostCopy<T> {
  return { token: undefined, posts: new Map() }
}

/** What one sync() found: apply it to a copy of the state `since` (or, when `reset`, to an empty one) to hold the state `until`. */
export interface SyncChange<T> {
  /**
   * True when `upserted` is every post: no `since` was given, or the front no longer knew it (its
   * 410 `sync-expired`). Whatever a copy held before is then gone, unless upserted again.
   */
  reset: boolean
  /** The state the change starts from (undefined when `reset`). */
  since: string | undefined
  /** The state it leads to: the `since` of the next sync. */
  until: string
  /** The posts added or changed since (when `reset`, every post). */
  upserted: T[]
  /** The slugs of the posts removed since (when `reset`, none). */
  deleted: string[]
}

export interface SyncRequest<T> extends RequestOptions {
  /** The copy to bring up to date: its token is the `since`, and the change is applied to it. */
  copy?: PostCopy<T> | undefined
  /** The state held, when there is no `copy` (a token kept elsewhere, such as a build cache). */
  since?: string | undefined
  /** Only these columns of each upserted post (`slug` always); keep the same ones from sync to sync. */
  fields?: readonly string[] | undefined
  /** Adds `C_html` and/or `C_text` to each upserted post, for each Markdown column `C`, as for a list. */
  formats?: ReadonlyArray<'html' | 'text'> | undefined
}

/** The front's answer: `{ since?, until, upserted, deleted }`. */
interface ChangesAnswer<T> { since?: string, until: string, upserted: T[], deleted: string[] }

type Get = <T>(path: string, query: Record<string, string | undefined>, options: RequestOptions) => Promise<{ body: T }>

function checked<T> (body: unknown): ChangesAnswer<T> {
  const answer = body as Partial<ChangesAnswer<T>> | null
  if (typeof answer?.until !== 'string' || !Array.isArray(answer.upserted) || !Array.isArray(answer.deleted) ||
    !answer.upserted.every((post) => typeof (post as { slug?: unknown } | null)?.slug === 'string') ||
    !answer.deleted.every((slug) => typeof slug === 'string')) {
    // A copy fed a wrong answer would be wrong from then on, silently: refused instead.
    throw new TypeError('The answer of /api/changes is not { until, upserted: [posts], deleted: [slugs] }.')
  }
  return answer as ChangesAnswer<T>
}

/** sync(), over the client's GET. */
export function createSync (get: Get) {
  return async function sync<T extends { slug: string }> ({ copy, since = copy?.token, fields, formats, ...options }: SyncRequest<T> = {}): Promise<SyncChange<T>> {
    const ask = async (from: string | undefined): Promise<ChangesAnswer<T>> =>
      checked<T>((await get<unknown>('api/changes', { since: from, fields: fields?.join(','), formats: formats?.join(',') }, options)).body)
    let answer: ChangesAnswer<T>
    let reset = since === undefined
    try {
      answer = await ask(since)
    } catch (err) {
      // The token is too old (or from another deployment): start again from every post.
      if (since === undefined || !(err instanceof BlogApiProblem) || err.status !== 410) throw err
      reset = true
      answer = await ask(undefined)
    }
    const change: SyncChange<T> = { reset, since: reset ? undefined : since, until: answer.until, upserted: answer.upserted, deleted: reset ? [] : answer.deleted }
    if (copy !== undefined) applyChange(copy, change)
    return change
  }
}

/** Applies `change` to `copy`, which then holds the state `change.until`. */
export function applyChange<T extends { slug: string }> (copy: PostCopy<T>, change: SyncChange<T>): void {
  if (change.reset) copy.posts.clear()
  for (const slug of change.deleted) copy.posts.delete(slug)
  for (const post of change.upserted) copy.posts.set(post.slug, post)
  copy.token = change.until
}
