// Where a post lives on the public site, for feed links and sitemap entries: `SITE_URL` and a
// template, `{site}/blog/{slug}` by default. Both are checked once, when the settings are read,
// so that a mistake stops the process at start-up instead of producing broken feeds.

export const DEFAULT_POST_URL_TEMPLATE = '{site}/blog/{slug}'

/** A post's absolute URL, from its slug. */
export type PostUrl = (slug: string) => string

/** The site's URL, which must be absolute http or https, without query or fragment; throws a message otherwise. */
export function parseSiteUrl (value: string): URL {
  const url = absoluteHttpUrl(value)
  if (url.search !== '' || url.hash !== '') throw new Error(`"${value}" has a query or a fragment; give the site's base URL`)
  return url
}

/**
 * The post URLs a template makes for a site. `{site}` is the site URL without its trailing slash
 * and `{slug}` the slug, percent-encoded (slugs the slug rule accepts need none; legacy ones
 * might). Throws a message when the template has no `{slug}`, names another placeholder, or does
 * not make an absolute http or https URL.
 */
export function createPostUrl (site: URL, template = DEFAULT_POST_URL_TEMPLATE): PostUrl {
  const unknown = /\{(?!site\}|slug\})[^}]*\}/.exec(template)
  if (unknown !== null) throw new Error(`"${template}" names ${unknown[0]}; only {site} and {slug} are known`)
  if (!template.includes('{slug}')) throw new Error(`"${template}" has no {slug}`)
  const withSite = template.replaceAll('{site}', site.href.replace(/\/+$/, ''))
  const postUrl: PostUrl = (slug) => withSite.replaceAll('{slug}', encodeURIComponent(slug))
  const example = postUrl('a')
  try {
    absoluteHttpUrl(example)
  } catch {
    throw new Error(`"${template}" does not make an absolute http or https URL (it makes "${example}")`)
  }
  return postUrl
}

function absoluteHttpUrl (value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error(`"${value}" is not an absolute URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`"${value}" is not an http or https URL`)
  if (url.username !== '' || url.password !== '') throw new Error(`"${value}" holds credentials`)
  return url
}
