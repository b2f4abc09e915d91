// Which link targets and image sources rendered Markdown keeps: http, https, mailto and relative
// references. Everything else (javascript:, vbscript:, data:, file:, ftp:, tel:…) is refused, and
// markdown-it then leaves the whole construct as literal text, so the author sees what was refused
// instead of losing it silently.

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:', 'mailto:'])
// A base that no real link shares: a relative reference resolves against it and keeps its
// protocol, so "relative" needs no rule of its own.
const RELATIVE_BASE = 'https://relative.invalid/'

/**
 * Whether a link target may be rendered. `href` is the target as markdown-it writes it into the
 * attribute (entities decoded, then percent-encoded by its `normalizeLink`); the attribute is
 * escaped on output, so a browser reads back exactly this string. The check is the URL parser
 * browsers use (WHATWG), which strips leading control characters and spaces and every tab and
 * newline, and lower-cases the scheme: `JaVaScRiPt:`, ` javascript:` and `java\tscript:` all
 * come out as `javascript:` here just as they would in the browser.
 */
export function isAllowedLink (href: string): boolean {
  let url: URL
  try {
    url = new URL(href, RELATIVE_BASE)
  } catch {
    return false
  }
  return ALLOWED_PROTOCOLS.has(url.protocol)
}
