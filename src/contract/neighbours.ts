// A detail answer's neighbours in the default list order, which both tiers send as RFC 8288
// links to their own detail route: `rel="prev"` the newer post, `rel="next"` the older one. The
// post API writes them from its per-version list of slugs; the front reads them from its
// answer and writes its own.

/** The post API's detail route, before the slug (percent-encoded). */
export const POST_ROUTE = '/api/post/'
/** The front's. */
export const BLOG_ROUTE = '/api/blog/'

/** The slugs either side of a post in the default list order; absent at either end. */
export interface Neighbours {
  readonly prev?: string
  readonly next?: string
}

/** The Link header of a detail answer on `route` (`/api/post/`), or undefined when the post has no neighbour. */
export function neighbourLink (route: string, { prev, next }: Neighbours): string | undefined {
  const links = [
    ...(prev === undefined ? [] : [`<${route}${encodeURIComponent(prev)}>; rel="prev"`]),
    ...(next === undefined ? [] : [`<${route}${encodeURIComponent(next)}>; rel="next"`])
  ]
  return links.length === 0 ? undefined : links.join(', ')
}

/**
 * The neighbours a Link header names on `route` (each a target `<route SLUG>`, the slug
 * percent-encoded, with rel `prev` or `next`); undefined when a prev or next link is not such a target.
 */
export function neighboursIn (header: string, route: string): Neighbours | undefined {
  const found: { prev?: string, next?: string } = {}
  for (const [, target = '', params = ''] of header.matchAll(/<([^<>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params)
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).filter((r) => r === 'prev' || r === 'next')
    if (rels.length === 0) continue
    const slug = target.startsWith(route) ? decoded(target.slice(route.length)) : undefined
    if (slug === undefined || slug === '') return undefined
    for (const r of rels) found[r as 'prev' | 'next'] = slug
  }
  return found
}

function decoded (text: string): string | undefined {
  if (/[?#/]/.test(text)) return undefined
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}
