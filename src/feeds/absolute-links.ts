// Feed readers show a post away from its site, so the relative links and images of its HTML are
// made absolute, resolved against the site's URL (`SITE_URL`) taken as a folder: with or without
// its trailing slash it names the same site (as in post URLs), so `diagram.png` under
// `https://example.com/blog` becomes `https://example.com/blog/diagram.png`, `/about` the site
// host's `/about`, and `#usage` a fragment of the site's URL. Authors write links for the site as
// a whole, whatever URL a post ends up at (POST_URL_TEMPLATE may change).
//
// The HTML is the Markdown renderer's (`C_html` of the post API): there, `<` only opens a tag, and
// `href` and `src` values are double-quoted with `&`, `<`, `>` and `"` escaped. So attributes are
// found by pattern, exactly, with no HTML parser; text that merely looks like an attribute is
// escaped in that HTML (`href=&quot;…`) and never matches.

const TAG = /<(?:a|img)\s[^>]*>/g
const LINK_ATTRIBUTE = /(\s(?:href|src)=")([^"]*)"/g
const ESCAPED = /&(?:amp|lt|gt|quot);/g
const UNESCAPED: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"' }
const SPECIAL = /[&<>"]/g
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }

/** The URL relative links resolve against, from the site's: the site's URL ending in a slash. */
export function linkBaseOf (siteUrl: string): string {
  return siteUrl.endsWith('/') ? siteUrl : `${siteUrl}/`
}

/**
 * `html` with each `href` and `src` of its links and images resolved against `base` (an absolute
 * URL), and each fragment alone against `postUrl` (the post's own absolute URL).
 */
export function resolveRelativeLinks (html: string, base: string, postUrl: string): string {
  return html.replace(TAG, (tag) => tag.replace(LINK_ATTRIBUTE, (_, start: string, value: string) => {
    const target = value.replace(ESCAPED, (entity) => UNESCAPED[entity]!)
    const resolved = resolve(target, target.startsWith('#') ? postUrl : base)
    return `${start}${resolved.replace(SPECIAL, (char) => ESCAPES[char]!)}"`
  }))
}

function resolve (target: string, base: string): string {
  // An absolute target is kept as written (`new URL` would rewrite its case and encoding).
  if (URL.canParse(target)) return target
  try {
    return new URL(target, base).href
  } catch {
    // A target that does not parse cannot be made absolute; it stays as the renderer wrote it.
    return target
  }
}
