// Feed readers show a post away from its site, so the relative links and images of its HTML are
// made absolute. They are resolved against the post's own URL, as a browser showing the post on
// the site resolves them: `/about` and `//cdn.example/x` mean the same as against the site's URL,
// and `#usage` or `diagram.png` keep pointing into the post or beside it.
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

/** `html` with each `href` and `src` of its links and images resolved against `base` (an absolute URL). */
export function resolveRelativeLinks (html: string, base: string): string {
  return html.replace(TAG, (tag) => tag.replace(LINK_ATTRIBUTE, (_, start: string, value: string) => {
    const target = value.replace(ESCAPED, (entity) => UNESCAPED[entity]!)
    return `${start}${resolve(target, base).replace(SPECIAL, (char) => ESCAPES[char]!)}"`
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
