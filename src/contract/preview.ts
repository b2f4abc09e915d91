// The `preview` query parameter of the detail routes, as both tiers read it: a preview token
// (minted by `blog-read-api preview-url`), which the front relays and the post API alone checks.

export const PREVIEW_PARAM = 'preview'

/** `Cache-Control` of a preview: for the one client that asked, kept by no cache at all. */
export const PREVIEW_CACHE_CONTROL = 'private, no-store'

/** The preview token of a request target (the first, when repeated; '' when empty), or undefined when it asks none. */
export function previewIn (url: string): string | undefined {
  const query = url.indexOf('?')
  if (query === -1) return undefined
  return new URLSearchParams(url.slice(query + 1)).get(PREVIEW_PARAM) ?? undefined
}
