// The posts version: what lets the front confirm every copy it holds with one call instead of a
// call per request, with freshness unchanged. The post API labels each answer with the version
// of the store it was read under (the store's change token, the same in every post API process
// reading that store, except on a SQLite file without the change counter, whose versions name
// their process), and answers the current version at VERSION_PATH, read after the request
// arrived. A copy labelled with the version the post API reads now is current: nothing was
// committed since it was read. An upstream that sends no version (a store without change
// tracking, or another implementation of the post API) is revalidated per request, as before.

/** Response header of the post API: the version an answer was read under. */
export const POSTS_VERSION_HEADER = 'posts-version'

/** The post API's route answering the current version. */
export const VERSION_PATH = '/api/posts/version'

/** What a version looks like (a token68-like value, short): anything else is ignored. */
export const VERSION_PATTERN = /^[\w.~-]{1,128}$/

/** The version in a header value, or undefined when there is none or it is not one. */
export function versionIn (header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && VERSION_PATTERN.test(header) ? header : undefined
}
